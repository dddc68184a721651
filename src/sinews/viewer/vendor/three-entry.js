// Entry of the vendored three.js bundle used by sinews.viewer (see README.md).
export {
  AmbientLight, BoxGeometry, CapsuleGeometry, Color, CylinderGeometry, DirectionalLight,
  GridHelper, AxesHelper, Group, HemisphereLight, Matrix4, Mesh, MeshStandardMaterial, PerspectiveCamera,
  PlaneGeometry, Quaternion, Scene, SphereGeometry, Vector3, WebGLRenderer, BufferGeometry,
  BufferAttribute, Fog, DoubleSide, ArrowHelper, LineBasicMaterial, LineSegments, Float32BufferAttribute, PCFSoftShadowMap,
} from 'three';
export { OrbitControls } from 'three/addons/controls/OrbitControls.js';
