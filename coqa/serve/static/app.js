// The coqa page: asks the JSON API and lays out the answers and the explanation.
// Plain browser JavaScript, no build step and no libraries (the page must work offline).
"use strict";

const $ = (selector) => document.querySelector(selector);
const SVG_NS = "http://www.w3.org/2000/svg";
const SOURCE_NAMES = { m: "mention2ent", n: "entity name", l: "literal value", quote: "quoted", prefix: "prefix", ner: "NER" };

function element(tag, attributes = {}, text = null) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  if (text !== null) node.textContent = text;
  return node;
}

function svgElement(tag, attributes = {}, text = null) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  if (text !== null) node.textContent = text;
  return node;
}

// POST a JSON body; resolves to the reply's JSON, rejects with the API's one-line error.
async function post(path, body) {
  let reply;
  try {
    reply = await fetch(path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  } catch (error) {
    throw new Error("cannot reach the coqa server: " + error.message);
  }
  let data = null;
  try {
    data = await reply.json();
  } catch (error) {
    throw new Error(`the server answered ${reply.status} without JSON`);
  }
  if (!reply.ok) throw new Error(data && data.error ? data.error : `the server answered ${reply.status}`);
  return data;
}

function showMessage(node, message) {
  node.textContent = message || "";
  node.hidden = !message;
}

// A PKU BASE term (<entity> or "literal") as a labelled chip; an entity's chip
// opens the SPARQL tab on the entity's facts.
function termChip(term) {
  const name = term.slice(1, -1);
  if (term.startsWith('"') || /[<>\n\r]/.test(name)) {
    return element("span", { class: term.startsWith('"') ? "term literal" : "term entity", title: term }, name);
  }
  const chip = element("button", { type: "button", class: "term entity", title: `${term}: show its facts` }, name);
  chip.addEventListener("click", () => exploreEntity(name));
  return chip;
}

function exploreEntity(name) {
  $("#sparql-query").value = `SELECT ?p ?o WHERE { <${name}> ?p ?o . }`;
  selectTab($("#tab-sparql"));
  runSparql();
}

function scoreCell(score) {
  const cell = element("td", { class: "score" });
  const bar = element("span", { class: "bar" });
  bar.style.width = `${Math.round(Math.max(0, Math.min(1, score)) * 100)}%`;
  cell.append(element("span", { class: "value" }, score.toFixed(3)), bar);
  return cell;
}

function renderMentions(explanation) {
  const target = $("#mentions");
  target.replaceChildren();
  const text = explanation.normalized || explanation.question;
  const mentions = [...explanation.mentions].sort((a, b) => a.start - b.start || b.end - a.end);
  let position = 0;
  for (const mention of mentions) {
    if (mention.start < position) continue; // overlapping spans: the earlier, longer one is shown
    target.append(text.slice(position, mention.start));
    const sources = mention.sources.map((s) => SOURCE_NAMES[s] || s).join(", ");
    const mark = element("mark", { title: `found by: ${sources}` }, text.slice(mention.start, mention.end));
    mark.append(element("sup", {}, mention.sources.join("/")));
    target.append(mark);
    position = mention.end;
  }
  target.append(text.slice(position));
}

function renderLinked(linked) {
  const body = $("#linked tbody");
  body.replaceChildren();
  for (const link of linked.slice(0, 10)) {
    const row = element("tr");
    const entity = element("td");
    entity.append(termChip(link.term));
    row.append(element("td", {}, link.mention), entity, scoreCell(link.score));
    body.append(row);
  }
  if (!linked.length) body.append(emptyRow(3, "no entity linked"));
}

function emptyRow(columns, message) {
  const row = element("tr");
  row.append(element("td", { colspan: columns, class: "muted" }, message));
  return row;
}

function renderCandidates(result) {
  const body = $("#candidates tbody");
  body.replaceChildren();
  const chosen = result.explanation.chosen;
  result.explanation.candidates.forEach((candidate, index) => {
    const row = element("tr", chosen && index === 0 ? { class: "chosen" } : {});
    const query = element("td");
    query.append(element("code", {}, candidate.sparql));
    const answers = element("div", { class: "terms" });
    candidate.answers.slice(0, 5).forEach((term) => answers.append(termChip(term)));
    if (candidate.answers.length > 5) answers.append(element("span", { class: "muted" }, ` +${candidate.answers.length - 5}`));
    if (!candidate.answers.length) answers.append(element("span", { class: "muted" }, "(no answer)"));
    const answerCell = element("td");
    answerCell.append(answers);
    row.append(element("td", {}, String(index + 1)), scoreCell(candidate.score), element("td", {}, candidate.shape), query, answerCell);
    body.append(row);
  });
  if (!result.explanation.candidates.length) body.append(emptyRow(5, "no candidate query"));
  $("#candidate-count").textContent = `(top ${result.explanation.candidates.length} of ${result.candidates_total})`;
}

function shortLabel(label) {
  return label.length > 16 ? label.slice(0, 15) + "…" : label;
}

// The chosen query graph: entities and literals as boxes, variables as dashed
// ellipses, the answer in colour, each triple pattern an arrow labelled with its predicate.
function renderGraph(graph) {
  const target = $("#query-graph");
  target.replaceChildren();
  if (!graph || !graph.nodes.length) return;
  // Drawn at the width it is shown at (at least 320 units), so labels keep their size on a phone.
  const width = Math.max(320, Math.min(720, target.clientWidth || 640));
  const height = graph.nodes.length <= 2 ? 130 : 300;
  const svg = svgElement("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": "chosen query graph" });
  const defs = svgElement("defs");
  const marker = svgElement("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 8, markerHeight: 8, orient: "auto-start-reverse" });
  marker.append(svgElement("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "arrow-head" }));
  defs.append(marker);
  svg.append(defs);

  const boxes = graph.nodes.map((node) => {
    const label = shortLabel(node.kind === "literal" ? `"${node.label}"` : node.label);
    return { label, halfWidth: Math.max(24, label.length * 7 + 10), halfHeight: 16 };
  });
  const widest = Math.max(...boxes.map((box) => box.halfWidth));
  const positions = new Map();
  const count = graph.nodes.length;
  graph.nodes.forEach((node, index) => {
    const box = boxes[index];
    if (count <= 2) {
      // side by side, as far apart as the width allows: the edge label sits between them
      box.x = count === 1 ? width / 2 : index === 0 ? box.halfWidth + 8 : width - box.halfWidth - 8;
      box.y = height / 2;
    } else {
      const angle = Math.PI + (2 * Math.PI * index) / count;
      box.x = width / 2 + Math.cos(angle) * (width / 2 - widest - 8);
      box.y = height / 2 + Math.sin(angle) * (height / 2 - 30);
    }
    positions.set(node.id, box);
  });

  const pairs = new Map();
  for (const edge of graph.edges) {
    const key = [edge.source, edge.target].sort().join("\u0000");
    pairs.set(key, (pairs.get(key) || 0) + 1);
  }
  const seen = new Map();
  for (const edge of graph.edges) {
    const from = positions.get(edge.source);
    const to = positions.get(edge.target);
    const key = [edge.source, edge.target].sort().join("\u0000");
    const index = seen.get(key) || 0;
    seen.set(key, index + 1);
    const bend = (index - ((pairs.get(key) || 1) - 1) / 2) * 50;
    const dx = to.x - from.x, dy = to.y - from.y;
    const length = Math.hypot(dx, dy) || 1;
    const cx = (from.x + to.x) / 2 - (dy / length) * bend;
    const cy = (from.y + to.y) / 2 + (dx / length) * bend;
    const start = boxEdge(from, cx, cy);
    const end = boxEdge(to, cx, cy);
    svg.append(svgElement("path", { d: `M ${start.x} ${start.y} Q ${cx} ${cy} ${end.x} ${end.y}`, class: "edge", "marker-end": "url(#arrow)" }));
    const lx = 0.25 * start.x + 0.5 * cx + 0.25 * end.x;
    const ly = 0.25 * start.y + 0.5 * cy + 0.25 * end.y - 6;
    const label = svgElement("g", {});
    label.append(svgElement("title", {}, edge.label));
    label.append(svgElement("text", { x: lx, y: ly, class: edge.variable ? "edge-label answer" : "edge-label" }, shortLabel(edge.label)));
    svg.append(label);
  }

  for (const node of graph.nodes) {
    const p = positions.get(node.id);
    const group = svgElement("g", { class: `node ${node.kind}${node.answer ? " answer" : ""}` });
    group.append(svgElement("title", {}, node.kind === "literal" ? `"${node.label}"` : node.label));
    if (node.kind === "variable") {
      group.append(svgElement("ellipse", { cx: p.x, cy: p.y, rx: p.halfWidth, ry: p.halfHeight }));
    } else {
      group.append(svgElement("rect", { x: p.x - p.halfWidth, y: p.y - p.halfHeight, width: 2 * p.halfWidth, height: 2 * p.halfHeight, rx: 6 }));
    }
    group.append(svgElement("text", { x: p.x, y: p.y + 5 }, p.label));
    svg.append(group);
  }
  target.append(svg);
}

// Where the line from a node's centre towards (x, y) leaves its box.
function boxEdge(p, x, y) {
  const dx = x - p.x, dy = y - p.y;
  if (!dx && !dy) return { x: p.x, y: p.y };
  const scale = 1 / Math.max(Math.abs(dx) / p.halfWidth, Math.abs(dy) / p.halfHeight);
  return { x: p.x + dx * scale, y: p.y + dy * scale };
}

const LOW_CONFIDENCE = 0.5; // as coqa.explanation.LOW_CONFIDENCE

// The calibrated probability that the answers are right; a low one is marked as uncertain.
function showConfidence(result) {
  const shown = $("#confidence");
  const low = result.answers.length > 0 && result.confidence < LOW_CONFIDENCE;
  shown.hidden = !result.answers.length;
  shown.className = low ? "confidence low" : "confidence";
  shown.textContent = `confidence ${result.confidence.toFixed(2)}` + (low ? " — low: this answer is likely wrong" : "");
}

function renderAnswer(result) {
  const explanation = result.explanation;
  $("#result").hidden = false; // first: the graph is drawn at the width it gets
  const answers = $("#answers");
  answers.replaceChildren();
  result.answers.forEach((term) => answers.append(termChip(term)));
  if (!result.answers.length) answers.append(element("span", { class: "muted" }, "no answer"));
  showConfidence(result);
  showMessage($("#failure"), explanation.failure ? `why: ${explanation.failure.message}` : "");
  renderMentions(explanation);
  renderLinked(explanation.linked);
  $("#chosen-sparql").textContent = explanation.chosen ? explanation.chosen.sparql : "(no query chosen)";
  renderGraph(result.query_graph);
  renderCandidates(result);
  $("#timing").textContent = `answered in ${(explanation.seconds * 1000).toFixed(1)} ms`;
}

async function ask(question) {
  showMessage($("#error"), "");
  $("#busy").hidden = false;
  $("#ask").disabled = true;
  try {
    renderAnswer(await post("/answer", { question, top: 10 }));
  } catch (error) {
    $("#result").hidden = true;
    showMessage($("#error"), error.message);
  } finally {
    $("#busy").hidden = true;
    $("#ask").disabled = false;
  }
}

async function runSparql() {
  showMessage($("#sparql-error"), "");
  const table = $("#sparql-results");
  table.tHead.replaceChildren();
  table.tBodies[0].replaceChildren();
  $("#sparql-status").textContent = "running…";
  const limit = parseInt($("#sparql-limit").value, 10);
  try {
    const result = await post("/sparql", limit > 0 ? { query: $("#sparql-query").value, limit } : { query: $("#sparql-query").value });
    const head = element("tr");
    result.variables.forEach((name) => head.append(element("th", {}, "?" + name)));
    table.tHead.append(head);
    for (const values of result.rows) {
      const row = element("tr");
      for (const value of values) {
        const cell = element("td");
        if (value !== null) cell.append(termChip(value));
        row.append(cell);
      }
      table.tBodies[0].append(row);
    }
    const more = result.truncated ? " (cut at the limit: there are more)" : "";
    $("#sparql-status").textContent = `${result.rows.length} rows${more} in ${(result.seconds * 1000).toFixed(1)} ms`;
  } catch (error) {
    $("#sparql-status").textContent = "";
    showMessage($("#sparql-error"), error.message);
  }
}

function selectTab(button) {
  for (const tab of document.querySelectorAll("[role=tab]")) {
    const selected = tab === button;
    tab.setAttribute("aria-selected", String(selected));
    $("#" + tab.dataset.panel).hidden = !selected;
  }
}

async function loadExamples() {
  const target = $("#examples");
  try {
    const reply = await fetch("/examples");
    const questions = await reply.json();
    for (const question of questions) {
      const button = element("button", { type: "button", class: "example" }, question);
      button.addEventListener("click", () => {
        $("#question").value = question;
        ask(question);
      });
      target.append(button);
    }
  } catch (error) {
    target.textContent = "";
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("#ask-form").addEventListener("submit", (event) => {
    event.preventDefault();
    ask($("#question").value);
  });
  $("#sparql-form").addEventListener("submit", (event) => {
    event.preventDefault();
    runSparql();
  });
  for (const tab of document.querySelectorAll("[role=tab]")) tab.addEventListener("click", () => selectTab(tab));
  loadExamples();
});
