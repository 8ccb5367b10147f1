"""NLPCC document-based QA (DBQA): rank the sentences of a question's document.

The stages, one module each:

    reading         DBQA files (2016 and 2017 column orders, unlabelled test
                    layout) -> questions with their candidate sentences
    text            normalisation and word segmentation (jieba's dictionary, jieba-rs)
    answer_types    what a question asks and what a sentence holds
    features        one feature row per sentence, judged within its document
    ranker          the trained LightGBM lambdarank part (fit, save, load)
    model           the model folder (meta.json, checksummed parts)
    training        train a model from a labelled file; cross-validation
    scoring         score a file, evaluate against labels (MRR, MAP, ACC@1)

It shares with the KBQA pipeline the LightGBM scorer (coqa.boosting), the
official metrics (coqa.evaluation.metrics) and the model-folder conventions;
it does not use the knowledge base.
"""
