// The page runtime kit: one start() call gives a lit, orbitable three.js scene with clickable parts,
// labels, a timeline, narration, sliders and a legend, in English or Chinese. Reference: docs/kit.md.
import * as THREE from "three";
import { OrbitControls } from "three/addons/controls/OrbitControls.js";
import { CSS2DRenderer } from "three/addons/renderers/CSS2DRenderer.js";

import { hooks, reportError, reportReady } from "./bridge.js";
import { createControls } from "./controls.js";
import { createParts } from "./parts.js";
import { createQuiz } from "./quiz.js";
import { shapes } from "./shapes.js";
import { applyState } from "./state.js";
import { pickLang, resolve, words } from "./text.js";
import { buildLayout, el, fillHeading, legendCard } from "./ui.js";

export { THREE };

const MAX_PIXEL_RATIO = 2;

let started = false;
// A page that imports the kit but never starts it would otherwise stay "loading" until a timeout.
window.addEventListener("load", () => started || reportError(new Error("kit: start() was never called"), "kit"));

function loadStylesheet() {
  // An exported page (one self-contained file) carries the stylesheet inline.
  if (document.querySelector("style[data-kit-css]")) return Promise.resolve();
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
  const labelRenderer = new CSS2DRenderer();
  labelRenderer.domElement.className = "kit-labels";
  ui.stage.append(labelRenderer.domElement);

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
    labelRenderer.setSize(width, height);
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

  const parts = createParts({ scene, camera, renderer, ui, tr, invalidate });
  const controlsDock = createControls({ ui, w, tr, guarded, invalidate, reducedMotion });
  const quiz = createQuiz({ ui, w, tr, invalidate });

  function legend(items) {
    const card = legendCard(items.map((i) => ({ color: i.color, text: tr(i.text) })), w.legend);
    ui.side.append(card);
    return card;
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
      controlsDock.advance(real);
      for (const fn of [...frameCallbacks]) fn(dt, elapsed);
      controls.update();
      if (!dirty && !frameCallbacks.length && !controlsDock.playing()) return;
      dirty = false;
      parts.placeLabels();
      renderer.render(scene, camera);
      labelRenderer.render(scene, camera);
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

  // Ready once the page script has run (the load event waits for module scripts), the stylesheet
  // is in, and two frames have been drawn without an error.
  const loaded = document.readyState === "complete" ? Promise.resolve() : new Promise((r) => window.addEventListener("load", r, { once: true }));
  Promise.all([loaded, styled]).then(() => {
    // The page's script has made every part, step and control: a state in the URL can name them now.
    applyState(location.hash, { parts, controls: controlsDock });
    window.addEventListener("hashchange", () => applyState(location.hash, { parts, controls: controlsDock }));
    const after = hooks.frames;
    const wait = () => {
      if (hooks.frames >= after + 2 || hooks.state === "error") {
        reportReady({ parts: [...hooks.parts], animations: [...hooks.animations], sliders: hooks.sliders.length,
                      quiz: hooks.quiz ? hooks.quiz.count : 0 });
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
    part: parts.part, label: parts.label, open: parts.open, legend,
    slider: controlsDock.slider, toggle: controlsDock.toggle, timeline: controlsDock.timeline, steps: controlsDock.steps,
    quiz,
    onFrame, focus, invalidate,
  };
}
