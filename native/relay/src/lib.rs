//! ferrodl-relay: the driver-hosted TCP hub of gradient sharing, no JNI.
