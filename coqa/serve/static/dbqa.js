// The "Rank sentences" tab (NLPCC DBQA): sends a question and a passage to
// POST /dbqa/rank and lists the sentences best first. Loaded after app.js,
// whose helpers ($, element, post, showMessage) it uses; text is only ever set
// as textContent, so a passage holding markup is shown as the text it is.
"use strict";

// The request for what the form holds: the passage as one text (the server
// splits it) or, with "one sentence per line", its non-blank lines.
function dbqaRequest() {
  const question = $("#dbqa-question").value;
  const passage = $("#dbqa-passage").value;
  if (!$("#dbqa-lines").checked) return { question, passage };
  return { question, sentences: passage.split(/\r?\n/).filter((line) => line.trim()) };
}

function rankedRow(item, rank) {
  const row = element("tr", rank === 1 ? { class: "best" } : {});
  row.append(
    element("td", {}, String(rank)),
    element("td", { class: "position" }, String(item.index + 1)),
    element("td", { class: "score" }, item.score.toFixed(3)),
    element("td", { class: "sentence" }, item.sentence),
  );
  return row;
}

function renderRanked(result) {
  const body = $("#dbqa-ranked tbody");
  body.replaceChildren(...result.ranked.map((item, position) => rankedRow(item, position + 1)));
  $("#dbqa-result").hidden = false;
  $("#dbqa-status").textContent = `${result.ranked.length} sentences, best first (place: where the sentence stands in the passage)`;
}

async function rankSentences() {
  if ($("#dbqa-rank").disabled) return; // one request at a time
  showMessage($("#dbqa-error"), "");
  $("#dbqa-status").textContent = "ranking…";
  $("#dbqa-rank").disabled = true;
  try {
    renderRanked(await post("/dbqa/rank", dbqaRequest()));
  } catch (error) {
    $("#dbqa-result").hidden = true;
    $("#dbqa-status").textContent = "";
    showMessage($("#dbqa-error"), error.message);
  } finally {
    $("#dbqa-rank").disabled = false;
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("#dbqa-form").addEventListener("submit", (event) => {
    event.preventDefault();
    rankSentences();
  });
  // In the passage, Enter starts a new line; Ctrl+Enter (Cmd+Enter) ranks.
  $("#dbqa-passage").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      $("#dbqa-form").requestSubmit();
    }
  });
});
