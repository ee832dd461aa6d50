//! ferrodl-comm: threshold encoding of parameter updates (Strom, Interspeech 2015), no JNI.
