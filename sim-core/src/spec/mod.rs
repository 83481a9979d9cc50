//! Plain SI specifications of a machine, its link and a model: what the physics computes with (no dataset types,
//! no references), so `describe`, `scenario` and `model` can all use them without depending on each other.
//! One file per concern: the machine and its link (`hardware`), its GEMMs' share of their roofline
//! (`gemm_curve`), the model (`model`), and its attention geometry (`attention`).

mod attention;
mod gemm_curve;
mod hardware;
mod model;

pub use attention::{AttentionSpec, ContextMeasures};
pub use gemm_curve::{CurveSource, GemmCurves, GemmShape, KernelCosts, LayerKernels, RooflineCurve, STACK_LAYER_GEMMS};
pub use hardware::{AllReduceCurve, HardwareSpec, IntraMachineFabric, LinkParams, TransportKind};
pub use model::{stored_bits_per_param, HostPin, ModelSpec, MLA_NOPE_HEAD_DIM, MLA_V_HEAD_DIM};
