// sinews viewer: plays the animation embedded in this page (element #sinews-data) with three.js.
// URL fragment (or query) parameters: t=<seconds> seeks to that time and pauses (unless play=1),
// play=0|1, speed=<factor>, controls=0 hides the control bar, forces=0 hides the contact forces,
// collision=1 shows the collision shapes when visual shapes are drawn.  document.body.dataset.state is
// "ready" once the first frame is drawn ("no-webgl" when the browser cannot draw WebGL).
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("sinews-data").textContent);
  const params = new URLSearchParams((location.hash || "").replace(/^#/, "") + "&" + (location.search || "").replace(/^\?/, ""));
  const view = document.getElementById("view");
  const status = document.getElementById("status");

  let renderer;
  try {
    renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
  } catch (err) {
    status.textContent = "This browser cannot draw WebGL: " + err.message;
    document.body.dataset.state = "no-webgl";
    return;
  }
  renderer.setPixelRatio(window.devicePixelRatio || 1);
  renderer.shadowMap.enabled = true;
  renderer.shadowMap.type = THREE.PCFSoftShadowMap;
  view.appendChild(renderer.domElement);

  const scene = new THREE.Scene();
  scene.background = new THREE.Color(data.background);
  const lo = data.bounds[0], hi = data.bounds[1];
  const center = new THREE.Vector3((lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2);
  const extent = Math.max(0.25, 0.5 * Math.hypot(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]));

  scene.fog = new THREE.Fog(data.background, 10 * extent, 30 * extent);
  const camera = new THREE.PerspectiveCamera(40, 1, extent * 0.01, extent * 200);
  camera.up.set(0, 0, 1);
  camera.position.set(center.x + 2.2 * extent, center.y - 3.0 * extent, center.z + 1.6 * extent);
  const controls = new THREE.OrbitControls(camera, renderer.domElement);
  controls.target.copy(center);
  controls.update();

  scene.add(new THREE.HemisphereLight(0xffffff, 0x8d8d8d, 1.6));
  const sun = new THREE.DirectionalLight(0xffffff, 2.2);
  sun.position.set(center.x + 2 * extent, center.y - 1.5 * extent, center.z + 5 * extent);
  sun.target.position.copy(center);
  sun.castShadow = true;
  const sc = sun.shadow.camera;
  sc.left = sc.bottom = -3 * extent; sc.right = sc.top = 3 * extent;
  sc.near = 0.01 * extent; sc.far = 20 * extent;
  sun.shadow.mapSize.set(2048, 2048);
  scene.add(sun, sun.target);

  function shapeGeometry(g) {
    const p = g.params;
    switch (g.kind) {
      case "sphere": return new THREE.SphereGeometry(p.radius, 32, 16);
      case "point": return new THREE.SphereGeometry(Math.max(0.004, 0.01 * extent), 12, 8);
      case "box": return new THREE.BoxGeometry(p.size[0], p.size[1], p.size[2]);
      case "capsule": return new THREE.CapsuleGeometry(p.radius, p.length, 8, 24).rotateX(Math.PI / 2);
      case "cylinder": return new THREE.CylinderGeometry(p.radius, p.radius, p.length, 32).rotateX(Math.PI / 2);
      case "halfspace": { const s = 8 * extent + 2; return new THREE.PlaneGeometry(2 * s, 2 * s); }
      case "mesh": {
        const b = new THREE.BufferGeometry();
        b.setAttribute("position", new THREE.Float32BufferAttribute(p.vertices, 3));
        b.setIndex(p.faces);
        b.computeVertexNormals();
        return b;
      }
      default: return null;
    }
  }

  const moving = [], collisionMeshes = [];
  const hasVisuals = data.geometries.some(function (g) { return g.role === "visual"; });
  data.geometries.forEach(function (g) {
    const geom = shapeGeometry(g);
    if (!geom) return;
    const c = g.color;
    const mat = new THREE.MeshStandardMaterial({
      color: new THREE.Color(c[0], c[1], c[2]), roughness: 0.55, metalness: 0.05,
      transparent: c[3] < 1, opacity: c[3], side: g.kind === "halfspace" ? THREE.DoubleSide : undefined,
    });
    const mesh = new THREE.Mesh(geom, mat);
    mesh.castShadow = g.kind !== "halfspace";
    mesh.receiveShadow = true;
    const holder = new THREE.Group();
    holder.name = g.name;
    holder.add(mesh);
    if (g.kind === "halfspace") {
      const spacing = Math.pow(10, Math.round(Math.log10((8 * extent + 2) / 20)));
      const s = spacing * Math.ceil((8 * extent + 2) / spacing);
      const grid = new THREE.GridHelper(s, Math.round(s / spacing), 0x9a9a9a, 0xc4c4c4);
      grid.rotation.x = Math.PI / 2;
      grid.position.z = 1e-4 * extent;
      holder.add(grid);
    }
    scene.add(holder);
    if (g.role === "collision" && g.kind !== "halfspace") collisionMeshes.push(holder);
    if (g.static) {
      const s = g.pose;
      holder.position.set(s[0], s[1], s[2]);
      holder.quaternion.set(s[3], s[4], s[5], s[6]);
    } else {
      moving.push(holder);
    }
  });

  // contact forces: one line segment per contact (point -> point + scale * force)
  const contacts = data.contacts;
  let arrows = null;
  if (contacts) {
    let most = 0;
    contacts.forEach(function (c) { most = Math.max(most, c.length / 6); });
    const buffer = new Float32Array(Math.max(1, most) * 6);
    const g = new THREE.BufferGeometry();
    g.setAttribute("position", new THREE.BufferAttribute(buffer, 3));
    g.setDrawRange(0, 0);
    arrows = new THREE.LineSegments(g, new THREE.LineBasicMaterial({ color: 0xd62728, depthTest: false }));
    arrows.renderOrder = 10;
    arrows.frustumCulled = false;
    scene.add(arrows);
  }

  // ------------------------------------------------------------------ animation state
  const times = data.times, frames = data.frames, n = times.length;
  const t0 = times[0], t1 = times[n - 1];
  let frame = 0, tNow = t0, playing = true, speed = 1.0;

  function frameAt(t) {  // the last frame whose time is <= t (binary search)
    let a = 0, b = n - 1;
    if (t >= times[b]) return b;
    while (b - a > 1) { const m = (a + b) >> 1; if (times[m] <= t) a = m; else b = m; }
    return a;
  }

  function setFrame(i) {
    frame = Math.max(0, Math.min(n - 1, i));
    const f = frames[frame];
    for (let k = 0; k < moving.length; k++) {
      const o = 7 * k;
      moving[k].position.set(f[o], f[o + 1], f[o + 2]);
      moving[k].quaternion.set(f[o + 3], f[o + 4], f[o + 5], f[o + 6]);
    }
    if (arrows) {
      const c = contacts[frame], attr = arrows.geometry.attributes.position;
      attr.array.set(c);
      attr.needsUpdate = true;
      arrows.geometry.setDrawRange(0, c.length / 3);
    }
    slider.value = String(frame);
    clock.textContent = "t = " + times[frame].toFixed(3) + " s / " + t1.toFixed(3) + " s";
  }

  // ------------------------------------------------------------------ controls
  const bar = document.getElementById("bar");
  const button = document.getElementById("play");
  const slider = document.getElementById("scrub");
  const clock = document.getElementById("clock");
  const speedSel = document.getElementById("speed");
  slider.max = String(n - 1);

  function setPlaying(p) {
    playing = p;
    button.textContent = p ? "Pause" : "Play";
  }
  button.addEventListener("click", function () {
    if (!playing && frame >= n - 1) tNow = t0;
    setPlaying(!playing);
  });
  slider.addEventListener("input", function () {
    setPlaying(false);
    setFrame(parseInt(slider.value, 10));
    tNow = times[frame];
  });
  speedSel.addEventListener("change", function () { speed = parseFloat(speedSel.value); });
  const forcesBox = document.getElementById("forces");
  if (!arrows) document.getElementById("forces-label").style.display = "none";
  else forcesBox.addEventListener("change", function () { arrows.visible = forcesBox.checked; });
  if (arrows && params.get("forces") === "0") { arrows.visible = false; forcesBox.checked = false; }
  const collisionBox = document.getElementById("collision");
  function showCollision(on) {
    collisionBox.checked = on;
    collisionMeshes.forEach(function (m) { m.visible = on; });
  }
  if (!hasVisuals) document.getElementById("collision-label").style.display = "none";
  else showCollision(params.get("collision") === "1");
  collisionBox.addEventListener("change", function () { showCollision(collisionBox.checked); });
  window.addEventListener("keydown", function (e) {
    if (e.key === " ") { e.preventDefault(); button.click(); }
    else if (e.key === "ArrowRight" || e.key === "ArrowLeft") {
      setPlaying(false);
      setFrame(frame + (e.key === "ArrowRight" ? 1 : -1));
      tNow = times[frame];
    }
  });

  if (params.has("speed")) {
    const s = parseFloat(params.get("speed"));
    if (s > 0) { speed = s; speedSel.value = String(s); }
  }
  if (params.get("controls") === "0") bar.style.display = "none";
  if (params.has("t")) {
    const t = parseFloat(params.get("t"));
    if (isFinite(t)) tNow = Math.max(t0, Math.min(t1, t));
    setPlaying(params.get("play") === "1");
  } else {
    setPlaying(params.get("play") !== "0");
  }

  function resize() {
    const w = view.clientWidth || window.innerWidth, h = view.clientHeight || window.innerHeight;
    renderer.setSize(w, h, false);
    renderer.domElement.style.width = "100%";
    renderer.domElement.style.height = "100%";
    camera.aspect = w / Math.max(1, h);
    camera.updateProjectionMatrix();
  }
  window.addEventListener("resize", resize);
  resize();

  let last = null;
  function tick(now) {
    if (playing && last !== null) {
      tNow += speed * (now - last) / 1000;
      if (tNow > t1) tNow = t0 + (tNow - t1) % Math.max(1e-9, t1 - t0);
    }
    last = now;
    if (playing) setFrame(frameAt(tNow));
    controls.update();
    renderer.render(scene, camera);
    requestAnimationFrame(tick);
  }

  setFrame(frameAt(tNow));
  renderer.render(scene, camera);  // draw the first frame now (screenshots, no rAF needed)
  document.body.dataset.state = "ready";
  window.sinewsViewer = { data: data, setFrame: setFrame, frame: function () { return frame; } };
  requestAnimationFrame(tick);
})();
