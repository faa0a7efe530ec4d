// The learner's page: one socket to /ws/explain/ (docs/protocol.md), a live view of the block being
// written, then the finished page in a sandboxed iframe, follow-ups and the thread's versions.
import { Socket } from "./socket.js";

const $ = (id) => document.getElementById(id);
const MASK = "▒";
const CJK = /[\u3400-\u9fff\uf900-\ufaff]/;

const app = $("app");
const state = {
  thread: app.dataset.thread || null,
  generation: null, // the generation being watched
  lastAsk: null, // {question, lang, thread} to resend on "Try again"
  fixing: null, // {attempt, attempts} while a page that failed its check is written again
  committed: [],
  draft: { block: null, pieces: [] }, // the last draft shown, to light up what each new one decides
  startedAt: 0,
};

const socket = new Socket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws/explain/`, {
  onEvent: handle,
  onStatus: (text) => { if (!state.generation) return; $("status").textContent = text; },
});

function langOf(question) {
  const chosen = $("lang").value;
  if (chosen !== "auto") return chosen;
  return CJK.test(question) ? "zh" : "en";
}

function ask(question, lang, thread) {
  question = question.trim();
  if (!question) return;
  state.lastAsk = { question, lang, thread };
  const message = { type: "ask", question, lang };
  if (thread) message.thread = thread;
  hide("problem");
  startLive(question);
  socket.send(message);
}

function startLive(question) {
  state.generation = null;
  state.committed = [];
  state.draft = { block: null, pieces: [] };
  state.startedAt = performance.now();
  $("live-question").textContent = question;
  $("committed").textContent = "";
  $("current").replaceChildren();
  $("status").textContent = "Sending your question…";
  $("progress-bar").style.width = "0";
  $("stop-button").disabled = false;
  show("live");
  hide("ask-section");
}

// Server events, one handler each.
const handlers = {
  queued(e) {
    state.generation = e.generation;
    state.thread = e.thread;
    app.dataset.thread = e.thread;
    history.replaceState(null, "", `/t/${e.thread}/`);
    $("status").textContent = e.position > 0 ? `Waiting for the model: ${e.position} ahead of you…` : "Starting…";
  },
  draft(e) {
    // Tokens decided since the previous draft of this block light up; earlier ones are settled.
    const before = state.draft.block === e.block ? state.draft.pieces : [];
    const spans = e.pieces.map((piece, i) => {
      const span = document.createElement("span");
      if (piece === null) {
        span.className = "mask";
        span.textContent = MASK;
      } else {
        span.className = before[i] == null ? "fresh" : "settled";
        span.textContent = piece;
      }
      return span;
    });
    state.draft = { block: e.block, pieces: e.pieces };
    $("current").replaceChildren(...spans);
    const resolved = e.pieces.filter((p) => p !== null).length;
    $("progress-bar").style.width = `${Math.round((100 * resolved) / e.pieces.length)}%`;
    scrollDraft();
  },
  commit(e) {
    state.committed[e.block] = e.text;
    $("committed").textContent = state.committed.join("");
    $("current").replaceChildren();
    scrollDraft();
  },
  stats(e) {
    const doing = state.fixing ? `Fixing (try ${state.fixing.attempt} of ${state.fixing.attempts})…` : "Writing…";
    $("status").textContent = `${doing} block ${e.blocks} · ${e.tokens} tokens · ${e.tokens_per_s} tokens/s`;
  },
  fixing(e) {
    // The page failed its check in a browser: the model writes it again, on generation `e.repair`.
    document.querySelector(`.version[data-page="${e.page}"]`)?.classList.add("failed-check");
    startLive($("page-question").textContent);
    state.generation = e.repair;
    state.fixing = { attempt: e.attempt, attempts: e.attempts };
    $("status").textContent = `Fixing… the page failed its check (${(e.errors || [])[0] || "in a browser"})`;
  },
  done(e) {
    const s = e.stats || {};
    const rate = s.tokens_per_s ? ` at ${s.tokens_per_s} tokens/s` : "";
    const took = s.seconds ? ` in ${s.seconds} s` : "";
    hide("live");
    showPage(e.page_url, $("live-question").textContent, e.page);
    addVersion(e.page, e.version, $("live-question").textContent, e.page_url);
    $("qa").hidden = false;
    $("qa").className = "qa pending";
    $("qa").textContent = `v${e.version}: ${s.tokens ?? "?"} tokens${took}${rate} · checking…`;
    state.generation = null;
    state.fixing = null;
  },
  qa(e) {
    if (e.repair) return; // a repair is under way: its own page and check follow
    const failed = (e.checks || []).filter((c) => !c.passed).map((c) => c.name);
    $("qa").className = `qa ${e.passed ? "passed" : "failed"}`;
    $("qa").textContent = e.passed
      ? "✓ Page checked in a browser"
      : `⚠ Page check: ${e.summary || failed.join(", ")}`;
  },
  error(e) {
    if (e.generation && state.generation && e.generation !== state.generation) return;
    state.generation = null;
    state.fixing = null;
    hide("live");
    const text = e.code === "cancelled" ? "Stopped. You can ask again." : e.message;
    $("problem-text").textContent = text;
    $("retry-button").hidden = !state.lastAsk;
    show("problem");
    if (!$("page-frame").getAttribute("src")) show("ask-section");
  },
  page_hidden(e) {
    document.querySelector(`.version[data-page="${e.page}"]`)?.closest("li")?.remove();
    if ($("page-frame").dataset.page === String(e.page)) {
      $("page-frame").removeAttribute("src");
      $("page-question").textContent = "Your teacher hid this page.";
    }
  },
};

function handle(event) {
  // A reconnect resumes the generation being watched: events say how far this page has got.
  if (event.generation && event.generation === state.generation) socket.seen(event.generation, event.id);
  handlers[event.type]?.(event);
}

function showPage(url, question, page) {
  const frame = $("page-frame");
  frame.src = url;
  frame.dataset.page = page ?? "";
  $("page-question").textContent = question;
  show("result");
  $("follow-question").value = "";
}

function addVersion(page, version, question, url) {
  const li = document.createElement("li");
  const button = document.createElement("button");
  button.type = "button";
  button.className = "version";
  Object.assign(button.dataset, { page, url, question });
  button.textContent = `v${version} · ${question}`;
  li.append(button);
  $("versions").append(li);
}

function scrollDraft() {
  const pre = $("draft");
  pre.scrollTop = pre.scrollHeight;
}

function show(id) { $(id).hidden = false; }
function hide(id) { $(id).hidden = true; }

$("ask-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const question = $("question").value;
  ask(question, langOf(question), null);
});
$("question").addEventListener("keydown", (ev) => {
  if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) {
    ev.preventDefault();
    $("ask-form").requestSubmit();
  }
});
$("follow-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const question = $("follow-question").value;
  ask(question, langOf(question), state.thread);
});
$("suggestions").addEventListener("click", (ev) => {
  const chip = ev.target.closest(".chip");
  if (!chip) return;
  $("question").value = chip.dataset.question;
  ask(chip.dataset.question, chip.dataset.lang || langOf(chip.dataset.question), null);
});
$("versions").addEventListener("click", (ev) => {
  const button = ev.target.closest(".version");
  if (button) showPage(button.dataset.url, button.dataset.question, button.dataset.page);
});
$("stop-button").addEventListener("click", () => {
  if (!state.generation) return;
  $("stop-button").disabled = true;
  $("status").textContent = "Stopping after this block…";
  socket.send({ type: "cancel", generation: state.generation });
});
$("retry-button").addEventListener("click", () => {
  const last = state.lastAsk;
  if (last) ask(last.question, last.lang, last.thread);
});
socket.watching = () => state.generation;
socket.open();
