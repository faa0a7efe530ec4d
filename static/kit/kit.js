// The page runtime kit: one start() call gives a lit, orbitable three.js scene with clickable parts,
// labels, a timeline, narration, sliders and a legend, in English or Chinese. Reference: docs/kit.md.
import * as THREE from "three";
import { OrbitControls } from "three/addons/controls/OrbitControls.js";
import { CSS2DObject, CSS2DRenderer } from "three/addons/renderers/CSS2DRenderer.js";

import { hooks, reportError, reportReady } from "./bridge.js";
import { shapes } from "./shapes.js";
import { pickLang, resolve, words } from "./text.js";
import { buildLayout, controlsCard, el, fillHeading, legendCard, rangeRow, stepsCard, toggleRow } from "./ui.js";

export { THREE };

const MAX_PIXEL_RATIO = 2;
const CLICK_SLOP_PX = 6;
const HIGHLIGHT = new THREE.Color("#4a6fa5");
const WHITE = new THREE.Color("#ffffff");

let started = false;
// A page that imports the kit but never starts it would otherwise stay "loading" until a timeout.
window.addEventListener("load", () => started || reportError(new Error("kit: start() was never called"), "kit"));

function loadStylesheet() {
  return new Promise((resolveLoad) => {
    const link = el("link", "", { rel: "stylesheet", href: new URL("./kit.css", import.meta.url).href });
    link.addEventListener("load", resolveLoad);
    link.addEventListener("error", () => {
      reportError(new Error("kit.css could not be loaded"), "resource");
      resolveLoad();
    });
    document.head.append(link);
  });
}

function ensureHead() {
  if (!document.querySelector('meta[name="viewport"]'))
    document.head.append(el("meta", "", { name: "viewport", content: "width=device-width, initial-scale=1" }));
  // Without an icon the browser asks the server for /favicon.ico, and its 404 reads as a page error.
  if (!document.querySelector('link[rel~="icon"]')) document.head.append(el("link", "", { rel: "icon", href: "data:," }));
}

// Returns the main light, which pages may move (app.light).
function addLights(scene, kind) {
  if (kind === "space") {
    scene.add(new THREE.AmbientLight("#ffffff", 0.35));
    const sun = new THREE.PointLight("#fff4e0", 3, 0, 0); // no falloff: planets far out stay lit
    scene.add(sun);
    return sun;
  }
  if (kind === false || kind === "none") return null;
  scene.add(new THREE.HemisphereLight("#e6eeff", "#30384a", 1.6));
  const key = new THREE.DirectionalLight("#ffffff", 2.2);
  key.position.set(5, 8, 6);
  scene.add(key);
  return key;
}

function visibleInScene(object) {
  for (let o = object; o; o = o.parent) if (!o.visible) return false;
  return true;
}

function isOpaque(object) {
  const materials = [object.material].flat().filter(Boolean);
  return materials.some((m) => !m.transparent || m.opacity >= 0.6);
}

export function start(options = {}) {
  if (started) throw new Error("kit: start() can be called only once per page");
  started = true;

  const lang = pickLang(options.lang);
  const w = words(lang);
  const tr = (text) => resolve(text, lang);
  document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
  if (options.title && !document.title) document.title = tr(options.title);
  ensureHead();
  const styled = loadStylesheet();
  const reducedMotion = window.matchMedia("(prefers-reduced-motion: reduce)").matches;

  const ui = buildLayout(w);
  fillHeading(ui.heading, { title: tr(options.title), intro: tr(options.intro), hint: w.hint });

  // Renderer, camera, controls.
  const renderer = new THREE.WebGLRenderer({ antialias: true });
  renderer.setPixelRatio(Math.min(window.devicePixelRatio || 1, MAX_PIXEL_RATIO));
  ui.stage.append(renderer.domElement);
  const labels = new CSS2DRenderer();
  labels.domElement.className = "kit-labels";
  ui.stage.append(labels.domElement);

  const scene = new THREE.Scene();
  scene.background = new THREE.Color(options.background ?? "#0d1322");
  const camera = new THREE.PerspectiveCamera(options.fov ?? 50, 1, 0.05, 5000);
  camera.position.set(...(options.camera ?? [0, 3, 9]));
  const controls = new OrbitControls(camera, renderer.domElement);
  controls.target.set(...(options.target ?? [0, 0, 0]));
  controls.enableDamping = !reducedMotion;
  controls.dampingFactor = 0.08;
  controls.update();
  const light = addLights(scene, options.lights ?? "studio");

  let dirty = true;
  const invalidate = () => {
    dirty = true;
  };
  controls.addEventListener("change", invalidate);

  let fitted = 1;
  function resize() {
    const width = window.innerWidth;
    const height = window.innerHeight;
    camera.aspect = width / height;
    // Portrait phones keep the page's horizontal view: the camera backs away instead of cropping.
    const fit = Math.min(Math.max(1.2 / camera.aspect, 1), 2.5);
    const away = camera.position.clone().sub(controls.target).multiplyScalar(fit / fitted);
    camera.position.copy(controls.target).add(away);
    fitted = fit;
    camera.updateProjectionMatrix();
    controls.update();
    renderer.setSize(width, height);
    labels.setSize(width, height);
    invalidate();
  }
  window.addEventListener("resize", resize);
  resize();

  // Centre the scene in the space the cards leave free: shift the view up by half the dock's height
  // (less the top cards on phones, where they span the width). Snapped to 24 px so it does not jitter.
  function reframe() {
    const width = window.innerWidth;
    const height = window.innerHeight;
    const dock = ui.dock.getBoundingClientRect();
    const top = ui.top.getBoundingClientRect();
    const covered = (dock.height ? height - dock.top : 0) - (ui.heading.offsetWidth > width * 0.6 ? top.bottom : 0);
    const shift = Math.max(0, Math.round(covered / 2 / 24) * 24);
    camera.setViewOffset(width, height, 0, shift, width, height);
    invalidate();
  }
  const observer = new ResizeObserver(reframe);
  observer.observe(ui.dock);
  observer.observe(ui.top);
  window.addEventListener("resize", reframe);

  // Callbacks from the page run guarded: one failure is reported once and that callback is dropped.
  function guarded(fn, list) {
    const wrapper = (...args) => {
      try {
        return fn(...args);
      } catch (error) {
        reportError(error, "callback");
        if (list && list.includes(wrapper)) list.splice(list.indexOf(wrapper), 1);
        return undefined;
      } finally {
        invalidate();
      }
    };
    return wrapper;
  }

  // ---- Labels ----------------------------------------------------------------------------
  const tracked = []; // {object, label, offset}: labels follow their object without turning with it

  function label(object, text, { offset, className } = {}) {
    const node = el("div", `kit-label ${className ?? ""}`.trim(), { text: tr(text) });
    const obj = new CSS2DObject(node);
    scene.add(obj);
    tracked.push({ object, label: obj, offset: offset ? new THREE.Vector3(...offset) : null });
    invalidate();
    return obj;
  }

  const box = new THREE.Box3();
  function placeLabels() {
    for (const { object, label: obj, offset } of tracked) {
      obj.visible = visibleInScene(object);
      if (!offset) box.setFromObject(object);
      if (offset || box.isEmpty()) {
        object.getWorldPosition(obj.position).add(offset ?? new THREE.Vector3(0, 0.5, 0));
      } else {
        // Just above the object's current bounds, over their centre (a group's origin may be elsewhere).
        box.getCenter(obj.position);
        obj.position.y = box.max.y + 0.25;
      }
    }
  }

  // ---- Parts and the info panel --------------------------------------------------------
  const parts = [];
  const partOf = new Map(); // registered root object -> part
  let hovered = null;
  let selected = null;
  let panelOpener = null;

  function part(object, { title, text, label: labelText = true } = {}) {
    const entry = { object, title: tr(title) || object.name || `part ${parts.length + 1}`, text: tr(text) };
    parts.push(entry);
    partOf.set(object, entry);
    hooks.parts.push(entry.title);
    if (labelText !== false) {
      const obj = label(object, labelText === true ? entry.title : labelText, { className: "kit-part-label" });
      obj.element.addEventListener("click", () => openPart(entry));
    }
    const button = el("button", "kit-button", { type: "button", text: entry.title });
    button.addEventListener("click", () => openPart(entry, button));
    ui.partsNav.append(button);
    return object;
  }

  function openPart(entry, opener = null) {
    selected = entry;
    panelOpener = opener;
    ui.panelTitle.textContent = entry.title;
    ui.panelText.textContent = entry.text;
    ui.panel.hidden = false;
    hooks.openPart = entry.title;
    if (opener) ui.panel.focus();
    applyHighlight();
  }

  function closePanel() {
    ui.panel.hidden = true;
    selected = null;
    hooks.openPart = null;
    applyHighlight();
    if (panelOpener) panelOpener.focus();
    panelOpener = null;
  }
  ui.close.addEventListener("click", closePanel);
  window.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && !ui.panel.hidden) closePanel();
  });

  const saved = new Map(); // material -> what the highlight changed
  function applyHighlight() {
    for (const [mat, before] of saved) {
      if (before.emissive) mat.emissive.copy(before.emissive);
      else mat.color.copy(before.color);
    }
    saved.clear();
    for (const entry of new Set([hovered, selected].filter(Boolean))) {
      entry.object.traverse((o) => {
        for (const mat of [o.material].flat().filter(Boolean)) {
          if (saved.has(mat)) continue;
          if (mat.emissive) {
            saved.set(mat, { emissive: mat.emissive.clone() });
            mat.emissive.add(HIGHLIGHT);
          } else if (mat.color) {
            saved.set(mat, { color: mat.color.clone() });
            mat.color.lerp(WHITE, 0.35);
          }
        }
      });
    }
    renderer.domElement.style.cursor = hovered ? "pointer" : "";
    invalidate();
  }

  const raycaster = new THREE.Raycaster();
  raycaster.params.Line.threshold = 0.05;
  raycaster.params.Points.threshold = 0.1;
  const ndc = new THREE.Vector2();

  function pick(clientX, clientY) {
    const rect = renderer.domElement.getBoundingClientRect();
    ndc.set(((clientX - rect.left) / rect.width) * 2 - 1, -((clientY - rect.top) / rect.height) * 2 + 1);
    raycaster.setFromCamera(ndc, camera);
    const hits = raycaster
      .intersectObjects(parts.map((p) => p.object), true)
      .filter((hit) => visibleInScene(hit.object));
    // See-through shells (membranes, atmospheres) let clicks reach the solid parts inside them.
    const hit = hits.find((h) => isOpaque(h.object)) ?? hits[0];
    if (!hit) return null;
    for (let o = hit.object; o; o = o.parent) if (partOf.has(o)) return partOf.get(o);
    return null;
  }

  let down = null;
  const canvas = renderer.domElement;
  canvas.addEventListener("pointerdown", (e) => {
    down = { x: e.clientX, y: e.clientY };
  });
  canvas.addEventListener("pointerup", (e) => {
    if (!down || Math.hypot(e.clientX - down.x, e.clientY - down.y) > CLICK_SLOP_PX) return;
    down = null;
    const entry = pick(e.clientX, e.clientY);
    if (entry) openPart(entry);
  });
  canvas.addEventListener("pointermove", (e) => {
    if (e.pointerType !== "mouse" || e.buttons) return;
    const entry = pick(e.clientX, e.clientY);
    if (entry !== hovered) {
      hovered = entry;
      applyHighlight();
    }
  });
  canvas.addEventListener("pointerleave", () => {
    if (hovered) {
      hovered = null;
      applyHighlight();
    }
  });

  // A viewport point where a real click lands on the part (for the render check), or null.
  function pointFor(title) {
    const entry = parts.find((p) => p.title === title);
    if (!entry || !visibleInScene(entry.object)) return null;
    scene.updateMatrixWorld(true);
    const box = new THREE.Box3().setFromObject(entry.object);
    if (box.isEmpty()) return null;
    const rect = canvas.getBoundingClientRect();
    const candidates = [box.getCenter(new THREE.Vector3())];
    entry.object.traverse((o) => {
      if (o.isMesh) candidates.push(o.getWorldPosition(new THREE.Vector3()));
      if (o.isLine || o.isPoints) {
        // Thin parts: only points on the line itself can be hit.
        const position = o.geometry.attributes.position;
        const stride = Math.max(1, Math.floor(position.count / 16));
        for (let i = 0; i < position.count; i += stride)
          candidates.push(new THREE.Vector3().fromBufferAttribute(position, i).applyMatrix4(o.matrixWorld));
      }
    });
    for (let i = 1; i < 5; i++)
      for (let j = 1; j < 5; j++)
        for (let k = 1; k < 5; k++)
          candidates.push(new THREE.Vector3(i / 5, j / 5, k / 5).multiply(box.getSize(new THREE.Vector3())).add(box.min));
    for (const world of candidates) {
      const p = world.clone().project(camera);
      if (Math.abs(p.x) > 0.98 || Math.abs(p.y) > 0.98 || p.z > 1) continue;
      const x = rect.left + ((p.x + 1) / 2) * rect.width;
      const y = rect.top + ((1 - p.y) / 2) * rect.height;
      if (document.elementFromPoint(x, y) === canvas && pick(x, y) === entry) return { x, y };
    }
    return null;
  }

  // ---- Legend ----------------------------------------------------------------------------
  function legend(items) {
    const card = legendCard(items.map((i) => ({ color: i.color, text: tr(i.text) })), w.legend);
    ui.side.append(card);
    return card;
  }

  // ---- Sliders and toggles ------------------------------------------------------------
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
    return input;
  }

  // ---- Timeline ----------------------------------------------------------------------------
  let timelineApi = null;

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
    api.seek(0);
    if (autoplay && !reducedMotion) api.play();
    else paint();
    timelineApi = api;
    return api;
  }

  // ---- Narration -----------------------------------------------------------------------------
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
    return api;
  }

  // ---- Frame loop ------------------------------------------------------------------------
  const frameCallbacks = [];
  let last = performance.now();
  let elapsed = 0;

  function onFrame(fn) {
    frameCallbacks.push(guarded(fn, frameCallbacks));
  }

  renderer.setAnimationLoop(() => {
    const now = performance.now();
    const real = Math.min((now - last) / 1000, 0.1);
    last = now;
    // Reduced motion stills continuous motion; a timeline the learner starts still plays.
    const dt = reducedMotion ? 0 : real;
    elapsed += dt;
    try {
      if (timelineApi) timelineApi.advance(real);
      for (const fn of [...frameCallbacks]) fn(dt, elapsed);
      controls.update();
      if (!dirty && !frameCallbacks.length && !(timelineApi && timelineApi.playing)) return;
      dirty = false;
      placeLabels();
      renderer.render(scene, camera);
      labels.render(scene, camera);
      hooks.frames += 1;
    } catch (error) {
      renderer.setAnimationLoop(null);
      reportError(error, "frame");
    }
  });

  function focus(object) {
    const box = new THREE.Box3().setFromObject(object);
    if (!box.isEmpty()) controls.target.copy(box.getCenter(new THREE.Vector3()));
    controls.update();
    invalidate();
  }

  hooks.open = (title) => {
    const entry = parts.find((p) => p.title === title);
    if (entry) openPart(entry);
    return Boolean(entry);
  };
  hooks.close = closePanel;
  hooks.pointFor = pointFor;

  // Ready once the page script has run (the load event waits for module scripts), the stylesheet
  // is in, and two frames have been drawn without an error.
  const loaded = document.readyState === "complete" ? Promise.resolve() : new Promise((r) => window.addEventListener("load", r, { once: true }));
  Promise.all([loaded, styled]).then(() => {
    const after = hooks.frames;
    const wait = () => {
      if (hooks.frames >= after + 2 || hooks.state === "error") {
        reportReady({ parts: [...hooks.parts], animations: [...hooks.animations], sliders: hooks.sliders.length });
      } else {
        invalidate();
        requestAnimationFrame(wait);
      }
    };
    invalidate();
    requestAnimationFrame(wait);
  });

  return {
    THREE, scene, camera, renderer, controls, light, lang, reducedMotion,
    ...shapes(scene),
    part, label, legend, slider, toggle, timeline, steps, onFrame, focus, invalidate,
    open: (object) => partOf.has(object) && openPart(partOf.get(object)),
  };
}
