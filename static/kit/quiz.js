// "Check your understanding": a short multiple-choice quiz in a dialog, one question at a time,
// with feedback after each answer and a score at the end.
import { hooks } from "./bridge.js";
import { el } from "./ui.js";

function validate(questions, tr) {
  if (!Array.isArray(questions) || questions.length === 0) throw new Error("kit: quiz() needs a list of questions");
  return questions.map((item, i) => {
    const where = `kit: quiz question ${i + 1}`;
    const options = Array.isArray(item?.options) ? item.options.map(tr) : [];
    if (!tr(item?.q)) throw new Error(`${where} has no q (the question)`);
    if (options.length < 2 || options.some((o) => !o)) throw new Error(`${where} needs at least two options`);
    if (!Number.isInteger(item.answer) || item.answer < 0 || item.answer >= options.length)
      throw new Error(`${where}: answer must be the index of the right option, 0..${options.length - 1}`);
    const feedback = Array.isArray(item.feedback) ? item.feedback.map(tr) : options.map(() => tr(item.feedback));
    if (feedback.length !== options.length) throw new Error(`${where}: give one feedback per option, or one for all`);
    return { q: tr(item.q), options, answer: item.answer, feedback };
  });
}

export function createQuiz({ ui, w, tr, invalidate }) {
  let made = false;

  return function quiz(list, { title } = {}) {
    if (made) throw new Error("kit: one quiz per page");
    made = true;
    const questions = validate(list, tr);
    const heading = tr(title) || w.quiz;

    const opener = el("button", "kit-button kit-quiz-open", { type: "button", text: `✓ ${heading}` });
    opener.setAttribute("aria-haspopup", "dialog");
    ui.side.append(opener);

    const dialog = el("section", "kit-card kit-quiz", { hidden: true, role: "dialog", "aria-label": heading, tabindex: "-1" });
    const close = el("button", "kit-close", { type: "button", "aria-label": w.close, text: "×" });
    const count = el("p", "kit-quiz-count");
    const question = el("h2", "kit-quiz-question");
    const options = el("div", "kit-quiz-options", { role: "group" });
    const feedback = el("p", "kit-quiz-feedback", { hidden: true, "aria-live": "polite" });
    const next = el("button", "kit-button kit-primary kit-quiz-next", { type: "button", hidden: true });
    dialog.append(close, el("h2", "kit-quiz-title", { text: heading }), count, question, options, feedback, next);
    document.body.append(dialog);

    const api = { index: 0, score: 0, answered: null, count: questions.length };

    function show(i) {
      api.index = i;
      api.answered = null;
      const item = questions[i];
      count.textContent = w.question(i + 1, questions.length);
      question.textContent = item.q;
      question.hidden = false;
      options.replaceChildren(
        ...item.options.map((text, choice) => {
          const button = el("button", "kit-button kit-quiz-option", { type: "button", text });
          button.addEventListener("click", () => api.answer(choice));
          return button;
        }),
      );
      feedback.hidden = true;
      feedback.className = "kit-quiz-feedback";
      next.hidden = true;
      invalidate();
    }

    function finish() {
      count.textContent = "";
      question.textContent = w.score(api.score, questions.length);
      options.replaceChildren();
      feedback.hidden = true;
      next.textContent = w.retry;
      next.hidden = false;
      api.index = questions.length;
      next.focus();
    }

    api.open = () => {
      dialog.hidden = false;
      if (api.index >= questions.length) api.restart();
      dialog.focus();
      return api;
    };
    api.close = () => {
      if (dialog.hidden) return api;
      dialog.hidden = true;
      opener.focus();
      return api;
    };
    api.restart = () => {
      api.score = 0;
      show(0);
      return api;
    };
    // Answer the current question with option `choice`: marks the options and shows the feedback.
    api.answer = (choice) => {
      const item = questions[api.index];
      if (!item || api.answered !== null) return api;
      api.answered = choice;
      const right = choice === item.answer;
      if (right) api.score += 1;
      [...options.children].forEach((button, i) => {
        button.disabled = true;
        if (i === item.answer) button.classList.add("kit-quiz-right");
        else if (i === choice) button.classList.add("kit-quiz-wrong");
      });
      const said = item.feedback[choice] || (right ? "" : `${w.answerIs} ${item.options[item.answer]}`);
      const verdict = right ? w.correct : w.wrong;
      // Chinese full-width punctuation already ends the verdict; English wants a space.
      feedback.textContent = said ? `${verdict}${/[。！？]$/.test(verdict) ? "" : " "}${said}` : verdict;
      feedback.className = `kit-quiz-feedback ${right ? "kit-quiz-good" : "kit-quiz-bad"}`;
      feedback.hidden = false;
      next.textContent = api.index + 1 < questions.length ? `${w.nextQuestion} ›` : w.finish;
      next.hidden = false;
      next.focus();
      return api;
    };

    opener.addEventListener("click", () => (dialog.hidden ? api.open() : api.close()));
    close.addEventListener("click", api.close);
    next.addEventListener("click", () => {
      if (api.index >= questions.length) api.restart();
      else if (api.index + 1 < questions.length) show(api.index + 1);
      else finish();
    });
    dialog.addEventListener("keydown", (event) => {
      if (event.key === "Escape") {
        event.stopPropagation();
        api.close();
      }
    });

    hooks.quiz = {
      count: questions.length,
      open: api.open,
      close: api.close,
      answer: (choice) => api.answer(choice).answered !== null,
      state: () => ({ open: !dialog.hidden, index: api.index, answered: api.answered, score: api.score,
                      feedback: feedback.hidden ? null : feedback.textContent }),
    };
    show(0);
    return api;
  };
}
