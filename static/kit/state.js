// A state in the page URL's fragment, `#step=3&part=Crater&control.Silica%20in%20the%20magma=57`, applied once
// the page's script has run, so a link reproduces what a follow-up asked to see (docs/kit.md). Every value is
// checked against the page's own steps, parts and controls; anything else is ignored, and nothing in the
// fragment is ever run or written into the page as markup.
import { hooks } from "./bridge.js";

const MAX_FRAGMENT = 2000;
const CONTROL = "control.";

// The fragment's step, part and controls, or null for none (or one too long to be the app's).
export function readState(hash) {
  const text = String(hash ?? "").replace(/^#/, "");
  if (!text || text.length > MAX_FRAGMENT) return null;
  const state = { step: null, part: null, controls: [] };
  for (const [key, value] of new URLSearchParams(text)) {
    if (key === "step" && /^[1-9]\d{0,3}$/.test(value)) state.step = Number(value);
    else if (key === "part") state.part = value;
    else if (key.startsWith(CONTROL) && key.length > CONTROL.length) state.controls.push([key.slice(CONTROL.length), value]);
  }
  return state;
}

// Apply the fragment's state to the page: the step first (it sets its own scene), then the controls, then the
// part's panel. Returns what was applied (also `__kit.applied`), or null.
export function applyState(hash, { parts, controls }) {
  let state;
  try {
    state = readState(hash);
  } catch {
    return null; // a fragment URLSearchParams cannot read: as if there were none
  }
  if (!state) return null;
  const applied = { step: null, part: null, controls: {} };
  const steps = controls.stepper();
  if (state.step !== null && steps && state.step <= steps.count) {
    steps.go(state.step - 1);
    applied.step = state.step;
  }
  for (const [label, value] of state.controls) {
    const set = controls.named(label);
    if (set && set(value)) applied.controls[label] = value;
  }
  if (state.part !== null && parts.openTitled(state.part)) applied.part = state.part;
  hooks.applied = applied;
  return applied;
}
