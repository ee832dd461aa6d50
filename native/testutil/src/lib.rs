//! ferrodl-testutil
