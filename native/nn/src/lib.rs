//! ferrodl-nn
