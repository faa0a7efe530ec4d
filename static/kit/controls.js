// The control dock: sliders, toggles, the timeline (play/pause + scrubber) and step-by-step narration.
import { hooks } from "./bridge.js";
import { controlsCard, el, rangeRow, stepsCard, toggleRow } from "./ui.js";

// A value from a page link for a slider or the timeline: a plain decimal number, nothing else.
const DECIMAL = /^-?\d{1,12}(\.\d{1,12})?$/;

export function createControls({ ui, w, tr, guarded, invalidate, reducedMotion }) {
  // Each control by the label the learner sees, for a state in the page URL (state.js); a label two controls
  // share names neither.
  const named = new Map();
  function register(label, setFromLink) {
    named.set(label, named.has(label) ? null : setFromLink);
  }
  const inRange = (value, low, high) => {
    const v = DECIMAL.test(value) ? Number(value) : NaN;
    return Number.isFinite(v) && v >= low && v <= high ? v : null;
  };
  function slider({ label: name, min = 0, max = 1, step = 0.01, value = min, format } = {}, onInput = () => {}) {
    const { row, input, readout } = rangeRow({ label: tr(name), min, max, step, value });
    const show = (v) => (readout.textContent = format ? tr(format(v)) : String(v));
    const call = guarded(onInput);
    input.addEventListener("input", () => {
      const v = Number(input.value);
      show(v);
      call(v);
    });
    input.set = (v) => {
      input.value = String(v);
      input.dispatchEvent(new Event("input"));
      return input;
    };
    controlsCard(ui.dock, w.controls).append(row);
    hooks.sliders.push(input);
    show(Number(input.value));
    call(Number(input.value));
    register(tr(name), (value) => {
      const v = inRange(value, Number(input.min), Number(input.max));
      if (v !== null) input.set(v);
      return v !== null;
    });
    return input;
  }

  function toggle({ label: name, value = false } = {}, onChange = () => {}) {
    const { row, input } = toggleRow({ label: tr(name), value });
    const call = guarded(onChange);
    input.addEventListener("change", () => call(input.checked));
    input.set = (on) => {
      input.checked = Boolean(on);
      input.dispatchEvent(new Event("change"));
      return input;
    };
    controlsCard(ui.dock, w.controls).append(row);
    call(input.checked);
    register(tr(name), (value) => {
      if (value !== "on" && value !== "off") return false;
      input.set(value === "on");
      return true;
    });
    return input;
  }

  let timelineApi = null;
  let stepsApi = null;

  function timeline({ duration = 10, label: name, format, loop = true, autoplay = true, speed = 1 } = {}) {
    if (timelineApi) throw new Error("kit: one timeline per page");
    const animations = [];
    const { row, input, readout } = rangeRow({ label: tr(name ?? w.timeline), min: 0, max: duration, step: "any", value: 0 });
    const play = el("button", "kit-button kit-play", { type: "button" });
    row.prepend(play);
    row.classList.add("kit-timeline");
    const card = controlsCard(ui.dock, w.controls);
    card.prepend(row);
    hooks.timeline = input;
    hooks.sliders.unshift(input);

    const api = {
      time: 0,
      duration,
      playing: false,
      add(animationName, fn) {
        const safe = guarded(fn, animations);
        animations.push(safe);
        hooks.animations.push(animationName);
        safe(api.time, api.time / duration);
        return api;
      },
      seek(t) {
        api.time = Math.min(Math.max(t, 0), duration);
        input.value = String(api.time);
        readout.textContent = format ? tr(format(api.time)) : api.time.toFixed(1);
        for (const fn of [...animations]) fn(api.time, api.time / duration);
        invalidate();
        return api;
      },
      play() {
        if (api.time >= duration && !loop) api.seek(0);
        api.playing = true;
        paint();
        return api;
      },
      pause() {
        api.playing = false;
        paint();
        return api;
      },
      advance(dt) {
        if (!api.playing) return;
        let t = api.time + dt * speed;
        if (t >= duration) {
          if (loop) t %= duration;
          else {
            t = duration;
            api.playing = false;
            paint();
          }
        }
        api.seek(t);
      },
    };
    function paint() {
      const label = api.playing ? w.pause : api.time >= duration && !loop ? w.replay : w.play;
      play.textContent = api.playing ? "❚❚" : "▶";
      play.setAttribute("aria-label", label);
      play.title = label;
    }
    play.addEventListener("click", () => (api.playing ? api.pause() : api.play()));
    input.addEventListener("input", () => {
      api.pause();
      api.seek(Number(input.value));
    });
    Object.defineProperty(hooks, "time", { get: () => api.time, configurable: true });
    register(tr(name ?? w.timeline), (value) => {
      if (value === "play" || value === "pause") {
        api[value]();
        return true;
      }
      const t = inRange(value, 0, duration);
      if (t !== null) api.pause().seek(t);
      return t !== null;
    });
    api.seek(0);
    if (autoplay && !reducedMotion) api.play();
    else paint();
    timelineApi = api;
    return api;
  }

  function steps(list) {
    const card = stepsCard(w);
    ui.dock.prepend(card.card);
    const api = {
      index: 0,
      count: list.length,
      go(i, { pause = true } = {}) {
        api.index = Math.min(Math.max(i, 0), list.length - 1);
        const step = list[api.index];
        card.title.textContent = tr(step.title);
        card.text.textContent = tr(step.text);
        card.counter.textContent = w.step(api.index + 1, list.length);
        card.prev.disabled = api.index === 0;
        card.next.disabled = api.index === list.length - 1;
        if (step.at !== undefined && timelineApi) {
          if (pause) timelineApi.pause();
          timelineApi.seek(step.at);
        }
        if (step.enter) guarded(step.enter)();
        invalidate();
        return api;
      },
      next: () => api.go(api.index + 1),
      prev: () => api.go(api.index - 1),
    };
    card.prev.addEventListener("click", api.prev);
    card.next.addEventListener("click", api.next);
    hooks.step = () => ({ index: api.index, count: api.count });
    api.go(0, { pause: false }); // the first step sets the scene without stopping autoplay
    stepsApi = api;
    return api;
  }

  return {
    slider,
    toggle,
    timeline,
    steps,
    advance: (dt) => timelineApi && timelineApi.advance(dt),
    playing: () => Boolean(timelineApi && timelineApi.playing),
    named: (label) => named.get(label) ?? null,
    stepper: () => stepsApi, // the narration, once the page has made it (state.js)
  };
}
