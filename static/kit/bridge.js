// Error bridge: tells the parent window (the app, the render check) at once whether the page works.
// Installed when the kit module is evaluated, before the page's own script runs.

const SOURCE = "explainer-kit";
const MAX_POSTED_ERRORS = 20;
const root = document.documentElement;

// The render check's handle; kit.js fills in parts, controls and methods.
export const hooks = {
  state: "loading",
  errors: [],
  parts: [],
  animations: [],
  openPart: null,
  timeline: null,
  sliders: [],
  quiz: null,
  frames: 0,
  applied: null, // what a state in the page URL set (state.js)
};
window.__kit = hooks;
root.dataset.kitState = "loading";

function post(message) {
  if (window.parent === window) return;
  try {
    window.parent.postMessage({ source: SOURCE, ...message }, "*");
  } catch {
    // A message that cannot be cloned must not turn into a second error.
  }
}

function describe(error) {
  if (error instanceof Error) return { message: `${error.name}: ${error.message}`, stack: error.stack ?? "" };
  if (error && typeof error === "object" && "message" in error) return { message: String(error.message), stack: "" };
  return { message: String(error), stack: "" };
}

export function reportError(error, kind = "uncaught") {
  const { message, stack } = describe(error);
  hooks.errors.push(message);
  hooks.state = "error";
  root.dataset.kitState = "error";
  if (hooks.errors.length <= MAX_POSTED_ERRORS) post({ type: "error", kind, message, stack });
}

export function reportReady(details) {
  if (hooks.state !== "loading") return;
  hooks.state = "ready";
  root.dataset.kitState = "ready";
  post({ type: "ready", ...details });
}

window.addEventListener("error", (event) => {
  // Failed <img>/<link> loads also fire "error" but do not bubble to window; these are script errors.
  reportError(event.error ?? event.message, "uncaught");
});
window.addEventListener("unhandledrejection", (event) => reportError(event.reason, "rejection"));

// three.js reports shader and context failures through console.error without throwing.
const consoleError = console.error.bind(console);
console.error = (...args) => {
  consoleError(...args);
  reportError(args.map((a) => (a instanceof Error ? `${a.name}: ${a.message}` : String(a))).join(" "), "console");
};
