//! ferrodl-tensor
