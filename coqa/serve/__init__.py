"""`coqa serve`: the HTTP API and the web page over the question pipeline.

app.py builds the FastAPI application (JSON API, web page, offline API
docs); service.py runs the pipeline processes that answer questions;
sparql.py runs raw SELECT queries within a row limit and a time limit;
query_graph.py turns a chosen query into the graph the page draws;
dbqa.py ranks a passage's sentences for a question (NLPCC DBQA, the page's
Rank sentences tab); server.py starts uvicorn in front of them
(coqa.testing.coqa_serve runs `coqa serve` as a child process for tests
and benchmarks). The page is static/: plain HTML, CSS and JS. The package only parses, calls
the library and serves: it needs the `serve` extra (FastAPI, uvicorn).
"""
