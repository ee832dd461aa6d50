//! ferrodl-data
