// Clickable parts, 3D labels and the info panel, with hover highlight and a click point for the render check.
import * as THREE from "three";
import { CSS2DObject } from "three/addons/renderers/CSS2DRenderer.js";

import { hooks } from "./bridge.js";
import { el } from "./ui.js";

const CLICK_SLOP_PX = 6;
const HIGHLIGHT = new THREE.Color("#4a6fa5");
const WHITE = new THREE.Color("#ffffff");

function visibleInScene(object) {
  for (let o = object; o; o = o.parent) if (!o.visible) return false;
  return true;
}

function isOpaque(object) {
  const materials = [object.material].flat().filter(Boolean);
  return materials.some((m) => !m.transparent || m.opacity >= 0.6);
}

export function createParts({ scene, camera, renderer, ui, tr, invalidate }) {
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

  function openTitled(title) {
    const entry = parts.find((p) => p.title === title);
    if (entry) openPart(entry);
    return Boolean(entry);
  }
  hooks.open = openTitled;
  hooks.close = closePanel;
  hooks.pointFor = pointFor;

  return {
    label,
    part,
    placeLabels,
    open: (object) => partOf.has(object) && openPart(partOf.get(object)),
    openTitled,
  };
}
