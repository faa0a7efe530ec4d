// Shape helpers: one call makes a mesh with a sensible material, places it and adds it to the scene.
import * as THREE from "three";

const UP = new THREE.Vector3(0, 1, 0);

export function material({ color = "#8ab4f8", emissive, opacity = 1, wireframe = false, flat = false, glow = false } = {}) {
  if (glow) return new THREE.MeshBasicMaterial({ color, transparent: opacity < 1, opacity, wireframe });
  return new THREE.MeshStandardMaterial({
    color,
    emissive: emissive ?? "#000000",
    roughness: 0.55,
    metalness: 0.05,
    transparent: opacity < 1,
    opacity,
    depthWrite: opacity >= 1,
    wireframe,
    flatShading: flat,
    side: opacity < 1 ? THREE.DoubleSide : THREE.FrontSide,
  });
}

function place(object, options, scene) {
  const { at, rotation, scale, name, parent } = options;
  if (at) object.position.set(...at);
  if (rotation) object.rotation.set(...rotation);
  if (scale !== undefined) Array.isArray(scale) ? object.scale.set(...scale) : object.scale.setScalar(scale);
  if (name) object.name = name;
  (parent ?? scene).add(object);
  return object;
}

function mesh(geometry, options, scene) {
  return place(new THREE.Mesh(geometry, material(options)), options, scene);
}

export function shapes(scene) {
  return {
    sphere: (o = {}) => mesh(new THREE.SphereGeometry(o.radius ?? 1, o.segments ?? 48, Math.ceil((o.segments ?? 48) / 2)), o, scene),
    box: (o = {}) => mesh(new THREE.BoxGeometry(...(o.size ?? [1, 1, 1])), o, scene),
    cylinder: (o = {}) =>
      mesh(new THREE.CylinderGeometry(o.radiusTop ?? o.radius ?? 0.5, o.radius ?? 0.5, o.height ?? 1, o.segments ?? 32), o, scene),
    cone: (o = {}) => mesh(new THREE.ConeGeometry(o.radius ?? 0.5, o.height ?? 1, o.segments ?? 32), o, scene),
    torus: (o = {}) => mesh(new THREE.TorusGeometry(o.radius ?? 1, o.tube ?? 0.1, 16, o.segments ?? 96, o.arc ?? Math.PI * 2), o, scene),
    capsule: (o = {}) => mesh(new THREE.CapsuleGeometry(o.radius ?? 0.5, o.length ?? 1, 8, o.segments ?? 24), o, scene),
    plane: (o = {}) => mesh(new THREE.PlaneGeometry(...(o.size ?? [10, 10])), { rotation: [-Math.PI / 2, 0, 0], ...o }, scene),
    group: (o = {}) => place(new THREE.Group(), o, scene),

    line(points, o = {}) {
      const line = new THREE.Line(new THREE.BufferGeometry(), lineMaterial(o));
      line.set = (next) => {
        line.geometry.dispose();
        line.geometry = new THREE.BufferGeometry().setFromPoints(next.map((p) => new THREE.Vector3(...p)));
        if (o.dashed) line.computeLineDistances();
        return line;
      };
      line.set(points);
      return place(line, o, scene);
    },

    // A cylinder between two points (bonds, strings, axles); move it with rod.set(from, to).
    rod(o = {}) {
      const rod = new THREE.Mesh(new THREE.CylinderGeometry(1, 1, 1, o.segments ?? 16), material(o));
      const r = o.radius ?? 0.05;
      rod.set = (from, to) => {
        const a = new THREE.Vector3(...from);
        const d = new THREE.Vector3(...to).sub(a);
        rod.position.copy(a).addScaledVector(d, 0.5);
        rod.quaternion.setFromUnitVectors(UP, d.clone().normalize());
        rod.scale.set(r, Math.max(d.length(), 1e-6), r);
        return rod;
      };
      rod.set(o.from ?? [0, 0, 0], o.to ?? [0, 1, 0]);
      const { at, ...rest } = o; // position comes from `from` and `to`
      return place(rod, rest, scene);
    },

    // A flat ring of line in the XZ plane (orbits, paths); tilt it with `rotation`.
    circle(o = {}) {
      const n = o.segments ?? 128;
      const r = o.radius ?? 1;
      const points = Array.from({ length: n }, (_, i) => {
        const a = (i / n) * Math.PI * 2;
        return new THREE.Vector3(Math.cos(a) * r, 0, Math.sin(a) * r);
      });
      const loop = new THREE.LineLoop(new THREE.BufferGeometry().setFromPoints(points), lineMaterial(o));
      if (o.dashed) loop.computeLineDistances();
      return place(loop, o, scene);
    },

    // A solid arrow from `from` to `to`; move it later with arrow.set(from, to).
    arrow(o = {}) {
      const group = new THREE.Group();
      const mat = material(o);
      const r = o.radius ?? 0.04;
      const shaft = new THREE.Mesh(new THREE.CylinderGeometry(r, r, 1, 12), mat);
      const head = new THREE.Mesh(new THREE.ConeGeometry(r * 2.6, 1, 16), mat);
      group.add(shaft, head);
      group.set = (from, to) => {
        const a = new THREE.Vector3(...from);
        const d = new THREE.Vector3(...to).sub(a);
        const length = d.length();
        const headLength = Math.min(r * 7, length * 0.4);
        group.visible = length > 1e-6;
        if (!group.visible) return group;
        group.position.copy(a);
        group.quaternion.setFromUnitVectors(UP, d.clone().normalize());
        shaft.scale.set(1, length - headLength, 1);
        shaft.position.y = (length - headLength) / 2;
        head.scale.set(1, headLength, 1);
        head.position.y = length - headLength / 2;
        return group;
      };
      group.set(o.from ?? [0, 0, 0], o.to ?? [0, 1, 0]);
      const { at, ...rest } = o; // position comes from `from`
      return place(group, rest, scene);
    },

    stars(o = {}) {
      const count = o.count ?? 1500;
      const radius = o.radius ?? 300;
      const positions = new Float32Array(count * 3);
      for (let i = 0; i < count; i++) {
        const v = new THREE.Vector3().randomDirection().multiplyScalar(radius * (0.6 + 0.4 * Math.random()));
        positions.set([v.x, v.y, v.z], i * 3);
      }
      const geometry = new THREE.BufferGeometry();
      geometry.setAttribute("position", new THREE.BufferAttribute(positions, 3));
      const points = new THREE.Points(geometry, new THREE.PointsMaterial({ color: o.color ?? "#ffffff", size: o.size ?? 1.2, sizeAttenuation: false }));
      return place(points, o, scene);
    },
  };
}

function lineMaterial({ color = "#9aa7c7", opacity = 1, dashed = false }) {
  const common = { color, transparent: opacity < 1, opacity };
  return dashed ? new THREE.LineDashedMaterial({ ...common, dashSize: 0.2, gapSize: 0.12 }) : new THREE.LineBasicMaterial(common);
}
