"""Scripts the render check runs inside the page under test (through CDP, so the page's CSP does not apply)."""

# Installed before any page script: records policy violations and counts DOM mutations.
INIT_SCRIPT = r"""
(() => {
  const probe = {violations: [], mutations: 0, quiet: null};
  Object.defineProperty(window, "__renderCheck", {value: probe, enumerable: false});
  document.addEventListener("securitypolicyviolation", (e) => {
    probe.violations.push({directive: e.effectiveDirective, blocked: e.blockedURI || "inline",
                           source: e.sourceFile || "", line: e.lineNumber || 0});
  });
  // Style writes are per-frame animation (3D labels move every frame), not a response to the user;
  // `probe.quiet` is the control being moved, whose own readout echoing its value is not one either.
  new MutationObserver((records) => {
    for (const r of records) {
      if (r.type === "attributes" && r.attributeName === "style") continue;
      if (probe.quiet && probe.quiet.contains(r.target)) continue;
      probe.mutations += 1;
    }
  }).observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  // WebGL canvases keep their drawing buffer, so the check can read the pixels themselves
  // (toDataURL) instead of waiting on the compositor for a screenshot.
  const getContext = HTMLCanvasElement.prototype.getContext;
  HTMLCanvasElement.prototype.getContext = function (type, attributes) {
    if (typeof type === "string" && type.startsWith("webgl")) {
      attributes = Object.assign({}, attributes, {preserveDrawingBuffer: true});
    }
    return getContext.call(this, type, attributes);
  };
})();
"""

STATE = """() => ({
  kitState: document.documentElement ? document.documentElement.dataset.kitState ?? null : null,
  kit: typeof window.__kit === "object" && window.__kit !== null,
  kitErrors: (window.__kit && Array.isArray(window.__kit.errors)) ? window.__kit.errors.map(String) : [],
  openPart: window.__kit ? (window.__kit.openPart ?? null) : null,
  frames: window.__kit ? (window.__kit.frames ?? null) : null,
  mutations: window.__renderCheck ? window.__renderCheck.mutations : 0,
  violations: window.__renderCheck ? window.__renderCheck.violations : [],
})"""

# The largest visible canvas, clipped to the viewport, and its index among the page's canvases.
CANVAS_BOX = """() => {
  let best = null;
  const all = document.querySelectorAll("canvas");
  for (let index = 0; index < all.length; index++) {
    const c = all[index];
    const r = c.getBoundingClientRect();
    const x = Math.max(0, r.left), y = Math.max(0, r.top);
    const w = Math.min(innerWidth, r.right) - x, h = Math.min(innerHeight, r.bottom) - y;
    const style = getComputedStyle(c);
    if (w < 8 || h < 8 || style.visibility === "hidden" || style.display === "none") continue;
    if (!best || w * h > best.width * best.height) best = {x, y, width: w, height: h, index, count: 0};
  }
  if (best) best.count = all.length;
  return best;
}"""

# The pixels of one canvas as a PNG data URL (a message instead when it cannot be read).
CANVAS_PNG = """(index) => {
  const canvas = document.querySelectorAll("canvas")[index];
  if (!canvas) return "the canvas is gone";
  try { return canvas.toDataURL("image/png"); } catch (e) { return String(e); }
}"""

# Where a real click lands on a part, from the kit's own `pointFor` (docs/kit.md, "For the render check").
KIT_PART_POINT = """() => {
  const kit = window.__kit;
  if (!kit || !Array.isArray(kit.parts) || kit.parts.length === 0) return null;
  if (typeof kit.pointFor === "function") {
    for (const title of kit.parts) {
      let p = null;
      try { p = kit.pointFor(title); } catch (e) { p = null; }
      if (p && Number.isFinite(p.x) && Number.isFinite(p.y)) {
        return {x: p.x, y: p.y, name: String(title), count: kit.parts.length};
      }
    }
  }
  return {x: null, y: null, name: null, count: kit.parts.length};
}"""

# A range input's bounds, and the key that moves it furthest from where it is.
SLIDER_INFO = """(s) => {
  const min = Number(s.min || 0), max = Number(s.max || 100), value = Number(s.value);
  return {value: s.value, key: value - min > (max - min) / 2 ? "Home" : "End",
          label: s.getAttribute("aria-label") || s.id || s.name || "slider"};
}"""

# While a control is moved, changes inside its own row (label, readout) are not counted.
QUIET_CONTROL = """(s) => {
  if (window.__renderCheck) window.__renderCheck.quiet = s.closest("label, .kit-row") || s.parentElement || s;
}"""
UNQUIET = "() => { if (window.__renderCheck) window.__renderCheck.quiet = null; }"

OVERFLOW = """() => {
  const width = document.documentElement.clientWidth || innerWidth;
  const scroll = Math.max(document.documentElement.scrollWidth, document.body ? document.body.scrollWidth : 0);
  const offenders = [];
  for (const e of document.body ? document.body.querySelectorAll("*") : []) {
    const r = e.getBoundingClientRect();
    if (r.right > width + 1 && r.width > 0 && getComputedStyle(e).position !== "fixed") {
      const name = e.tagName.toLowerCase() + (e.id ? "#" + e.id : "")
        + (typeof e.className === "string" && e.className ? "." + e.className.trim().split(/\\s+/).join(".") : "");
      offenders.push(`${name} (right edge ${Math.round(r.right)} px)`);
      if (offenders.length >= 3) break;
    }
  }
  return {width, scroll, offenders};
}"""

NEXT_FRAMES = "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))"
