//! ferrodl-optim
