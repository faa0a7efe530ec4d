// The learner's page: one socket to /ws/explain/ (docs/protocol.md), a live view of the block being
// written, then the finished page in a sandboxed iframe, follow-ups and the thread's versions.
import { Socket } from "./socket.js";
import { interfaceLang, say as sayIn } from "./say.js";

const $ = (id) => document.getElementById(id);
const MASK = "▒";
const CJK = /[\u3400-\u9fff\uf900-\ufaff]/;
// Errors about the question itself, or a limit it ran into (`rate_limited` lasts the hour): sending it again
// gets the same answer, so "Try again" is not offered. A page that failed (`empty_page`) may well be written
// next time: a model samples anew.
const OFFERING_CODES = new Set(["unknown_topic", "off_topic"]);
// What a problem the page knows by its code says, in the question's language where that is not English (an
// English question gets the server's own words). A class's own wording (`blocked` and the like) is shown as
// written.
const PROBLEMS = {
  retry: gettext_noop("The model worker stopped while writing this page; it is being written again."),
  requeued: gettext_noop("The model worker stopped while writing this page; it will be written again."),
  unavailable: gettext_noop("The explainer cannot take questions right now. Please try again in a minute."),
  rate_limited: gettext_noop("You have asked a lot of questions this hour. Take a break and come back soon!"),
  limit: gettext_noop("You have asked all the questions you can today. Come back tomorrow!"),
  empty_question: gettext_noop("Type a question first."),
  question_too_long: gettext_noop("That question is too long: please keep it under 500 characters."),
  unsupported_language: gettext_noop("Explainer answers questions in English or Chinese. Please ask in one of them."),
  unknown_thread: gettext_noop("That thread does not exist or is not yours."),
  expired: gettext_noop("This answer's live view has expired; open the thread to see its pages."),
  stream_failed: gettext_noop("The live view stopped; reconnecting will resume it."),
  generation_failed: gettext_noop("The page could not be written."),
  empty_page: gettext_noop("The model did not write a complete page."),
  timeout: gettext_noop("Writing this page took too long, so it was stopped."),
  model_unavailable: gettext_noop("The model is not available right now. Please try again later."),
  bad_reply: gettext_noop("The model's answer was not a page."),
  prompt_too_long: gettext_noop("This question and the page together are too long for the model."),
  worker_lost: gettext_noop("The model worker stopped while writing this page and could not finish it."),
  message_too_big: gettext_noop("That message is too long to send."),
};
const FINAL_CODES = new Set(["unknown_topic", "cannot_revise", "empty_question", "question_too_long",
  "unsupported_language", "bad_field", "unknown_thread", "blocked", "off_topic", "language", "limit",
  "rate_limited"]);

const app = $("app");
const state = {
  thread: app.dataset.thread || null,
  generation: null, // the generation being watched
  checking: null, // a finished generation whose page's check a reloaded view waits for (its `qa` alone)
  lastAsk: null, // {question, lang, thread} to resend on "Try again"
  fixing: null, // {attempt, attempts, verdict} while a page that failed its check (verdict) is written again
  stopping: false, // Stop was pressed: the status says so until the generation ends
  hidden: new Map(), // page → its entry in the versions, kept while a teacher hides it
  committed: [],
  draft: { block: null, pieces: [] }, // the last draft shown, to light up what each new one decides
  startedAt: 0,
};

const socket = new Socket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws/explain/`, {
  onEvent: handle,
  // `what`: "reconnecting" | "recovering", said in the question's language.
  onStatus: (what) => {
    if (!state.generation) return;
    $("status").textContent = what === "recovering" ? say().gettext("The server is busy recovering; reconnecting…")
      : say().gettext("Connection lost; reconnecting…");
  },
});

function langOf(question) {
  const chosen = $("lang").value;
  if (chosen !== "auto") return chosen;
  return CJK.test(question) ? "zh" : "en";
}

// The language questions are asked in: the one chosen, else the interface's (the header's switch).
function uiLang() {
  const chosen = $("lang").value;
  return chosen === "auto" ? interfaceLang : chosen;
}

// The page's words for the question being answered (the interface's language before any question).
const say = () => sayIn(state.lastAsk?.lang || interfaceLang);

// Example questions come from the library in both languages; show those of the question language chosen.
// A class's own suggestions are its topics' seed questions, in whichever languages the teacher wrote them:
// those in the interface's language, or all of them when none is.
function showSuggestions() {
  const lang = uiLang();
  const chips = [...$("suggestions").querySelectorAll(".chip")];
  const langOfChip = (chip) => chip.dataset.lang || (CJK.test(chip.dataset.question) ? "zh" : "en");
  const any = chips.some((chip) => langOfChip(chip) === lang);
  for (const chip of chips) chip.hidden = any && langOfChip(chip) !== lang;
}

function ask(question, lang, thread, topic) {
  question = question.trim();
  if (!question) { // `required` lets spaces through; the server would refuse them
    showProblem(say().gettext("Type a question first."));
    return;
  }
  state.lastAsk = { question, lang, thread, topic };
  // The status, the check badge, the topic lines and the problems speak the question's language from now
  // on: screen readers should read them in it.
  for (const id of ["live", "problem", "qa", "page-topic"]) $(id).lang = lang;
  const message = { type: "ask", question, lang };
  if (thread) message.thread = thread;
  if (topic) message.topic = topic;
  hide("problem");
  startLive(question);
  socket.send(message);
}

function startLive(question) {
  state.generation = null;
  state.stopping = false;
  state.committed = [];
  state.draft = { block: null, pieces: [] };
  state.startedAt = performance.now();
  $("live-question").textContent = question;
  $("live-topic").hidden = true;
  $("committed").textContent = "";
  $("current").replaceChildren();
  $("status").textContent = say().gettext("Sending your question…");
  $("progress-bar").style.width = "0";
  $("stop-button").disabled = false;
  show("live");
  hide("ask-section");
  passFocus("ask-section", "status");
}

// Server events, one handler each.
const handlers = {
  queued(e) {
    state.generation = e.generation;
    state.thread = e.thread;
    app.dataset.thread = e.thread;
    history.replaceState(null, "", `/t/${e.thread}/`);
    if (state.stopping) return; // a place in the queue no longer matters
    // Sent again as the queue moves (and when a question is sent to the model again after an outage).
    const waiting = e.position > 0
      ? say().gettext("Waiting for the model: %(ahead)s ahead of you…", { ahead: e.position })
      : say().gettext("Starting…");
    const again = e.message ? problemText("requeued", e.message) : "";
    $("status").textContent = again ? `${again} ${waiting}` : waiting;
  },
  retry(e) {
    // The worker writing this page stopped; another writes it again from the start.
    state.committed = [];
    state.draft = { block: null, pieces: [] };
    $("committed").textContent = "";
    $("current").replaceChildren();
    $("progress-bar").style.width = "0";
    $("status").textContent = problemText("retry", e.message);
  },
  topic(e) {
    // What the server understood, before any draft: the library page being written, or none.
    // A refusal (an `error` follows) names no page; a page a model writes for the question says the question
    // it answers, and the library lesson it was grounded on only as a related lesson.
    if (!e.slug && !e.answers) return;
    const asked = state.lastAsk?.lang;
    for (const id of ["live-topic", "page-topic"]) {
      const line = $(id);
      line.replaceChildren(say().gettext("Explaining: %(title)s", { title: e.answers || e.title }));
      line.lang = e.lang === "zh" ? "zh" : "en";
      if (e.answers && e.related) {
        const note = document.createElement("span");
        note.className = "note related";
        note.textContent = say().gettext("Related lesson: %(title)s", { title: e.related.title });
        line.append(note);
      }
      if (asked && e.lang && e.lang !== asked) {
        const note = document.createElement("span");
        note.className = "note";
        note.lang = asked;
        note.textContent = e.lang === "zh" ? say().gettext("available in 中文 only")
          : say().gettext("only in English so far");
        line.append(note);
      }
      if (e.source === "library") {
        // The model cannot write this topic's page: the library's own page is the answer.
        const note = document.createElement("span");
        note.className = "note";
        note.lang = asked || line.lang;
        note.textContent = sayIn(note.lang).gettext("From the library");
        line.append(note);
      }
      line.hidden = false;
    }
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
    if (state.stopping) return; // the block being written is the last: say so until it ends
    const doing = state.fixing ? say().gettext("Fixing (try %(attempt)s of %(attempts)s)…", state.fixing)
      : say().gettext("Writing…");
    $("status").textContent = say().gettext("%(doing)s block %(blocks)s · %(tokens)s tokens · %(rate)s tokens/s",
      { doing, blocks: e.blocks, tokens: e.tokens, rate: e.tokens_per_s });
  },
  fixing(e) {
    // The page failed its check in a browser: the model writes it again, on generation `e.repair`.
    document.querySelector(`.version[data-page="${e.page}"]`)?.classList.add("failed-check");
    startLive($("page-question").textContent);
    state.generation = e.repair;
    state.fixing = { attempt: e.attempt, attempts: e.attempts };
    $("status").textContent = say().gettext("Fixing… the page failed its check (%(why)s)",
      { why: (e.errors || [])[0] || say().gettext("in a browser") });
  },
  done(e) {
    const s = e.stats || {};
    hide("live");
    if (e.unchanged) {
      // The model wrote the page the learner already has: no new version to add or check. Said in the
      // problem box, which a late check of the shown page does not overwrite. What the learner typed in
      // the follow-up box stays, to be asked again in other words.
      state.generation = null;
      state.fixing = null;
      showProblem(say().gettext("The model wrote the same page again: it knows this lesson one way and cannot change it yet."));
      passFocus("live", "problem");
      return;
    }
    showPage(pageLink(e.page), $("live-question").textContent, e.page);
    passFocus("live", "page-question");
    addVersion(e.page, e.version, $("live-question").textContent);
    $("qa").hidden = false;
    $("qa").className = "qa pending";
    // A page served from the library, or the page itself shown in a state (`e.state`, which the frame's link
    // carries), was not written now: it has no token count to show.
    const made = e.state ? say().gettext("this page, shown for your question")
      : s.tokens == null ? say().gettext("from the library") : madeLine(s);
    $("qa").textContent = say().gettext("v%(version)s: %(made)s · checking…", { version: e.version, made });
    state.generation = null;
    state.fixing = null;
  },
  qa(e) {
    const failed = (e.checks || []).filter((c) => !c.passed).map((c) => c.name);
    const button = document.querySelector(`.version[data-page="${e.page}"]`);
    if (button && e.status === "failed") flagVersion(button);
    const verdict = {
      page: e.page, status: e.status, passed: e.passed,
      text: e.passed ? say().gettext("✓ Page checked in a browser")
        : say().gettext("⚠ Page check: %(what)s", { what: e.summary || failed.join(", ") }),
    };
    // A repair is under way: its own page and check follow, unless it fails, and then this verdict stands.
    if (e.repair) {
      if (state.fixing) state.fixing.verdict = verdict;
      return;
    }
    showVerdict(verdict);
  },
  error(e) {
    if (e.generation && state.generation && e.generation !== state.generation) return;
    // A repair that fails leaves the page it was repairing as the thread's last, with that page's check.
    const verdict = state.fixing?.verdict;
    if (verdict) showVerdict(verdict);
    state.generation = null;
    state.fixing = null;
    hide("live");
    const text = e.code === "cancelled" ? say().gettext("Stopped. You can ask again.") : problemText(e.code, e.message);
    showProblem(text, {
      // A refusal may offer topics to ask instead: the library's (unknown_topic) or the class's (off_topic).
      nearest: OFFERING_CODES.has(e.code) ? e.nearest || [] : [],
      unsure: OFFERING_CODES.has(e.code) && Boolean(e.unsure),
      // Asking the same question again would only be refused again.
      retry: Boolean(state.lastAsk) && !FINAL_CODES.has(e.code),
    });
    passFocus("live", "problem");
    if (!$("page-frame").getAttribute("src")) show("ask-section");
  },
  page_hidden(e) {
    const entry = document.querySelector(`.version[data-page="${e.page}"]`)?.closest("li");
    if (entry) {
      state.hidden.set(String(e.page), entry);
      entry.remove();
    }
    if ($("page-frame").dataset.page === String(e.page)) {
      clearPage();
      $("page-question").textContent = say().gettext("Your teacher hid this page.");
    }
  },
  page_shown(e) {
    // A teacher showed a hidden page of this thread again: it rejoins the versions, with its question and
    // check (kept from when this view listed it, else from the event).
    if (e.thread !== state.thread || document.querySelector(`.version[data-page="${e.page}"]`)) return;
    const kept = state.hidden.get(String(e.page));
    const button = kept ? placeVersion(kept, e.version) : addVersion(e.page, e.version, e.question || say().gettext("shown again by your teacher"));
    if (!kept && e.check === "failed") flagVersion(button);
    const { url, question, check } = button.dataset;
    if ($("page-frame").getAttribute("src")) return;
    showPage(url, question, e.page, check);
    // A thread opened while every version was hidden showed the question box and said so: the page takes
    // their place, as when the thread is opened with a visible page.
    $("thread-hidden")?.remove();
    hide("ask-section");
  },
};

function handle(event) {
  if (state.checking && event.generation === state.checking) return awaitCheck(event);
  // A reconnect resumes the generation being watched: events say how far this page has got.
  if (event.generation && event.generation === state.generation) socket.seen(event.generation, event.id);
  handlers[event.type]?.(event);
}

// Reloaded between a page's `done` and its `qa`: the generation's stream is replayed, and of it only the
// check's verdict (and a repair it starts) is news; the page and its version are on the page already.
function awaitCheck(event) {
  socket.seen(event.generation, event.id);
  if (!["qa", "fixing", "error"].includes(event.type)) return;
  state.checking = null;
  if (event.type !== "error") handlers[event.type](event);
  else hide("qa"); // the stream expired or the check never ran: nothing to say about it here
}

// A problem the page knows by its code, in the question's language; else (and for an English question) the
// server's words.
function problemText(code, message) {
  const words = say();
  return words.lang !== "en" && PROBLEMS[code] ? words.gettext(PROBLEMS[code]) : message;
}

// What writing a page took: its tokens, and the time and rate when known (figures as a person reads them:
// 2.1179 s is 2.1 s, 541.56 tokens/s is 542).
function madeLine({ tokens, seconds, tokens_per_s: rate }) {
  const words = say();
  let made = words.ngettext("%(count)s token", "%(count)s tokens", tokens);
  if (seconds) made = words.gettext("%(made)s in %(seconds)s s", { made, seconds: Number(Number(seconds).toFixed(1)) });
  if (rate) made = words.gettext("%(made)s at %(rate)s tokens/s", { made, rate: Number(Number(rate).toFixed(0)) });
  return made;
}

// A problem, in the box above the page: with a refusal's nearest topics, and "Try again" where it can help.
function showProblem(text, { nearest = [], unsure = false, retry = false } = {}) {
  $("problem-text").textContent = text;
  showNearest(nearest, unsure);
  $("retry-button").hidden = !retry;
  show("problem");
}

// `maxlength` cuts a longer paste without a word: once the text reaches it, the note under the box says so.
function sayLimit(box) {
  const note = $(`${box.id}-limit`);
  note.textContent = say().gettext("Questions can be at most %(max)s characters: anything longer is cut.",
    { max: box.maxLength });
  note.hidden = box.value.length < box.maxLength;
}

// A refusal's nearest library topics, each a button that asks for that topic. `unsure`: the router could
// not tell whether the first is the question's topic, so the label asks.
function showNearest(nearest, unsure = false) {
  const chips = nearest.map((n) => {
    const chip = document.createElement("button");
    chip.type = "button";
    chip.className = "chip";
    Object.assign(chip.dataset, { topic: n.slug, question: n.title });
    chip.textContent = n.title;
    return chip;
  });
  $("nearest-topics").replaceChildren(...chips);
  // In the language of the refusal above it, which is the question's.
  const label = $("nearest-label");
  label.lang = state.lastAsk?.lang === "zh" ? "zh" : "en";
  label.textContent = unsure ? sayIn(label.lang).gettext("Is your question about one of these?")
    : sayIn(label.lang).gettext("Topics the library has that come close:");
  $("nearest").hidden = chips.length === 0;
}

// A page's link on this server, which sends the browser on to a freshly signed page link: signed links
// expire, and a tab may stay open for hours.
const pageLink = (page) => `/pages/${page}/open/`;

// The same link asking for the page as one file that works without a network.
function offerDownload(url) {
  const download = new URL(url, location.href);
  download.searchParams.set("download", "1");
  $("page-download").href = download.href;
  $("page-download").hidden = false;
}
if ($("page-frame").getAttribute("src")) offerDownload($("page-frame").getAttribute("src"));

function showPage(url, question, page, check = "") {
  const frame = $("page-frame");
  frame.src = url;
  frame.dataset.page = page ?? "";
  offerDownload(url);
  // A page that failed its render check is still shown, with a warning that stays with it.
  $("page-warning").hidden = check !== "failed";
  $("qa").hidden = true;
  $("page-question").textContent = question;
  show("result");
  $("follow-question").value = "";
  sayLimit($("follow-question"));
}

// A render check's verdict: the badge, and the warning when the page it checked is the one shown.
function showVerdict({ page, status, passed, text }) {
  if ($("page-frame").dataset.page === String(page)) $("page-warning").hidden = status !== "failed";
  $("qa").className = `qa ${passed ? "passed" : "failed"}`;
  $("qa").textContent = text;
}

// The frame and what goes with it, emptied: the page it showed is no longer the learner's to open.
function clearPage() {
  const frame = $("page-frame");
  frame.removeAttribute("src");
  delete frame.dataset.page;
  $("page-download").removeAttribute("href");
  for (const id of ["page-download", "page-warning", "qa"]) hide(id);
}

function flagVersion(button) {
  button.dataset.check = "failed";
  if (!button.classList.contains("failed")) {
    button.classList.add("failed");
    button.textContent = `⚠ ${button.textContent}`;
  }
}

// A version's entry; returns its button.
function addVersion(page, version, question) {
  const li = document.createElement("li");
  const button = document.createElement("button");
  button.type = "button";
  button.className = "version";
  Object.assign(button.dataset, { page, version, url: pageLink(page), question });
  button.textContent = `v${version} · ${question}`;
  li.append(button);
  return placeVersion(li, version);
}

// An entry put in version order (a page a teacher shows again may be older than the others); returns its button.
function placeVersion(li, version) {
  const later = [...$("versions").querySelectorAll(".version")].find((b) => Number(b.dataset.version) > version);
  $("versions").insertBefore(li, later?.closest("li") ?? null);
  return li.querySelector(".version");
}

function scrollDraft() {
  const pre = $("draft");
  pre.scrollTop = pre.scrollHeight;
}

// Hiding the section that holds the focus drops it to <body>, and the next Tab starts the page over: it
// goes on to what takes the section's place instead.
function passFocus(from, to) {
  const active = document.activeElement;
  if (active === document.body || $(from).contains(active)) $(to).focus();
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
  sayLimit($("question"));
  ask(chip.dataset.question, chip.dataset.lang || langOf(chip.dataset.question), null);
});
$("nearest-topics").addEventListener("click", (ev) => {
  const chip = ev.target.closest(".chip");
  if (chip) ask(chip.dataset.question, state.lastAsk?.lang || uiLang(), null, chip.dataset.topic);
});
for (const box of [$("question"), $("follow-question")]) box.addEventListener("input", () => sayLimit(box));
$("lang").addEventListener("change", showSuggestions);
$("versions").addEventListener("click", (ev) => {
  const button = ev.target.closest(".version");
  if (button) showPage(button.dataset.url, button.dataset.question, button.dataset.page, button.dataset.check);
});
$("stop-button").addEventListener("click", () => {
  if (!state.generation) return;
  $("stop-button").disabled = true;
  state.stopping = true;
  $("status").textContent = say().gettext("Stopping after this block…");
  socket.send({ type: "cancel", generation: state.generation });
});
$("retry-button").addEventListener("click", () => {
  const last = state.lastAsk;
  if (last) ask(last.question, last.lang, last.thread, last.topic);
});
showSuggestions();
// A reloaded thread says again what its page explains, and the shown version's check if it passed (a
// failed one has its warning already).
const savedTopic = document.getElementById("thread-topic");
if (savedTopic) handlers.topic(JSON.parse(savedTopic.textContent));
const shown = document.querySelector(`.version[data-page="${$("page-frame").dataset.page}"]`);
if (shown?.dataset.check === "passed") {
  showVerdict({ page: shown.dataset.page, status: "passed", passed: true,
    text: say().gettext("✓ Page checked in a browser") });
  $("qa").hidden = false;
}
// Reloaded while a page of this thread was being written: watch it again from its first event.
if (app.dataset.generation) {
  startLive(app.dataset.watchingQuestion || "");
  state.generation = app.dataset.generation;
} else if (app.dataset.checking && $("page-frame").dataset.page === app.dataset.checkingPage) {
  // ... or written and not yet checked: wait for the check's verdict.
  state.checking = app.dataset.checking;
  $("qa").className = "qa pending";
  $("qa").textContent = say().gettext("Checking the page in a browser…");
  $("qa").hidden = false;
}
socket.watching = () => state.generation || state.checking;
socket.thread = () => state.thread;
socket.open();
