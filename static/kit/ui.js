// The page's HTML overlay: title, legend, info panel, parts list and the control dock.

export function el(tag, className, props = {}) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  for (const [key, value] of Object.entries(props)) {
    if (key === "text") node.textContent = value;
    else if (key in node && typeof value !== "string") node[key] = value;
    else node.setAttribute(key, value);
  }
  return node;
}

export function buildLayout(w) {
  const stage = el("div", "kit-stage");
  const top = el("header", "kit-top");
  const heading = el("div", "kit-card kit-heading");
  const side = el("div", "kit-side");
  const dock = el("div", "kit-dock");
  const panel = el("aside", "kit-card kit-panel", { hidden: true, "aria-live": "polite", tabindex: "-1" });
  const panelTitle = el("h2", "kit-panel-title");
  const panelText = el("p", "kit-panel-text");
  const close = el("button", "kit-close", { type: "button", "aria-label": w.close, text: "×" });
  panel.append(close, panelTitle, panelText);
  const partsNav = el("nav", "kit-card kit-parts", { "aria-label": w.parts });
  top.append(heading, side);
  document.body.append(stage, top, panel, dock, partsNav);
  return { stage, top, heading, side, dock, panel, panelTitle, panelText, close, partsNav };
}

export function fillHeading(heading, { title, intro, hint }) {
  heading.replaceChildren();
  if (title) heading.append(el("h1", "kit-title", { text: title }));
  if (intro) heading.append(el("p", "kit-intro", { text: intro }));
  heading.append(el("p", "kit-hint", { text: hint }));
}

export function legendCard(items, label) {
  const card = el("section", "kit-card kit-legend", { "aria-label": label });
  const list = el("ul");
  for (const { color, text } of items) {
    const item = el("li");
    const swatch = el("span", "kit-swatch", { "aria-hidden": "true" });
    swatch.style.background = color;
    item.append(swatch, el("span", "", { text }));
    list.append(item);
  }
  card.append(list);
  return card;
}

export function controlsCard(dock, label) {
  let card = dock.querySelector(".kit-controls");
  if (!card) {
    card = el("section", "kit-card kit-controls", { "aria-label": label });
    dock.append(card);
  }
  return card;
}

export function rangeRow({ label, min, max, step, value }) {
  const row = el("label", "kit-row");
  const name = el("span", "kit-row-label", { text: label });
  const input = el("input", "kit-range", { type: "range", min: String(min), max: String(max), step: String(step) });
  input.value = String(value);
  const readout = el("output", "kit-readout");
  row.append(name, input, readout);
  return { row, input, readout };
}

export function toggleRow({ label, value }) {
  const row = el("label", "kit-row kit-toggle");
  const input = el("input", "", { type: "checkbox", role: "switch" });
  input.checked = Boolean(value);
  row.append(input, el("span", "kit-row-label", { text: label }));
  return { row, input };
}

export function stepsCard(w) {
  const card = el("section", "kit-card kit-steps", { "aria-live": "polite" });
  const counter = el("span", "kit-step-count");
  const title = el("h2", "kit-step-title");
  const text = el("p", "kit-step-text");
  const prev = el("button", "kit-button", { type: "button", text: `‹ ${w.prev}` });
  const next = el("button", "kit-button kit-primary", { type: "button", text: `${w.next} ›` });
  const nav = el("div", "kit-step-nav");
  nav.append(prev, counter, next);
  card.append(title, text, nav);
  return { card, counter, title, text, prev, next };
}
