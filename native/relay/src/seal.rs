//! Frame encryption (protocol v2, optional): ChaCha20-Poly1305 with per-connection,
//! per-direction keys derived from the fit's secret, and counter nonces.
//!
//! - Keys: `HMAC-SHA256(secret, "ferrodl-relay/v3/key-c2r\0" | "…/key-r2c\0" || relay_nonce ||
//!   client_nonce || partition || attempt)`. Both nonces are fresh per connection, so no two
//!   connections (nor two directions) ever share a key; HMAC-SHA256 keyed with the secret over a
//!   unique input is a PRF, which is what a key derivation needs.
//! - Nonce of a frame: its sequence number in its direction (u64 little-endian, then 4 zero
//!   bytes). Each side counts what it sends and what it receives and opens a frame only under the
//!   number it expects next, so a replayed, reordered, dropped or injected frame fails to
//!   authenticate and ends the connection. A nonce is never used twice under one key: the
//!   counter only grows, and a connection that would reach 2^64 frames is refused.
//! - AAD: the frame's header (type and varint length, 2–6 bytes), so neither can be altered.

use chacha20poly1305::aead::{AeadInPlace, KeyInit};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce, Tag};
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::proto::NONCE_LEN;
use crate::WorkerId;

/// Bytes of the Poly1305 tag that follows every sealed payload.
pub(crate) const TAG_LEN: usize = 16;

const KEY_C2R: &[u8] = b"ferrodl-relay/v3/key-c2r\0";
const KEY_R2C: &[u8] = b"ferrodl-relay/v3/key-r2c\0";

/// Which way a key protects.
#[derive(Clone, Copy)]
pub(crate) enum Direction {
    ClientToRelay,
    RelayToClient,
}

fn derive(
    secret: &[u8],
    dir: Direction,
    relay_nonce: &[u8; NONCE_LEN],
    client_nonce: &[u8; NONCE_LEN],
    worker: WorkerId,
) -> ChaCha20Poly1305 {
    let mut mac =
        <Hmac<Sha256> as Mac>::new_from_slice(secret).expect("HMAC takes any key length");
    mac.update(match dir {
        Direction::ClientToRelay => KEY_C2R,
        Direction::RelayToClient => KEY_R2C,
    });
    mac.update(relay_nonce);
    mac.update(client_nonce);
    mac.update(&worker.partition.to_be_bytes());
    mac.update(&worker.attempt.to_be_bytes());
    let key = mac.finalize().into_bytes();
    ChaCha20Poly1305::new(Key::from_slice(&key))
}

fn nonce(counter: u64) -> Nonce {
    let mut n = [0u8; 12];
    n[..8].copy_from_slice(&counter.to_le_bytes());
    Nonce::from(n)
}

/// The sending half: seals frames in order.
pub(crate) struct Sealer {
    aead: ChaCha20Poly1305,
    next: u64,
}

/// The receiving half: opens frames in order.
pub(crate) struct Opener {
    aead: ChaCha20Poly1305,
    next: u64,
}

/// Both halves of one side of a connection.
pub(crate) fn keys(
    secret: &[u8],
    relay_side: bool,
    relay_nonce: &[u8; NONCE_LEN],
    client_nonce: &[u8; NONCE_LEN],
    worker: WorkerId,
) -> (Sealer, Opener) {
    let (send, recv) = if relay_side {
        (Direction::RelayToClient, Direction::ClientToRelay)
    } else {
        (Direction::ClientToRelay, Direction::RelayToClient)
    };
    (
        Sealer {
            aead: derive(secret, send, relay_nonce, client_nonce, worker),
            next: 0,
        },
        Opener {
            aead: derive(secret, recv, relay_nonce, client_nonce, worker),
            next: 0,
        },
    )
}

impl Sealer {
    /// Encrypts `buf` in place under the next sequence number; returns the tag to send after it.
    pub(crate) fn seal(&mut self, aad: &[u8], buf: &mut [u8]) -> Result<[u8; TAG_LEN], String> {
        if self.next == u64::MAX {
            return Err("2^64 frames sent on one connection: refusing to reuse a nonce".into());
        }
        let tag = self
            .aead
            .encrypt_in_place_detached(&nonce(self.next), aad, buf)
            .map_err(|_| "frame too long to encrypt".to_string())?;
        self.next += 1;
        Ok(tag.into())
    }
}

impl Opener {
    /// Decrypts `buf` in place if it is the next frame, unaltered; otherwise `Err` (the
    /// connection must then be closed: the stream was tampered with).
    pub(crate) fn open(&mut self, aad: &[u8], buf: &mut [u8], tag: &[u8]) -> Result<(), String> {
        if tag.len() != TAG_LEN || self.next == u64::MAX {
            return Err("bad frame tag".into());
        }
        self.aead
            .decrypt_in_place_detached(&nonce(self.next), aad, buf, Tag::from_slice(tag))
            .map_err(|_| {
                format!(
                    "frame {} failed authentication (altered, replayed, reordered or injected)",
                    self.next
                )
            })?;
        self.next += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair() -> ((Sealer, Opener), (Sealer, Opener)) {
        let (rn, cn) = ([1u8; 32], [2u8; 32]);
        let w = WorkerId {
            partition: 4,
            attempt: 1,
        };
        let s = b"0123456789abcdef-secret";
        (keys(s, false, &rn, &cn, w), keys(s, true, &rn, &cn, w))
    }

    #[test]
    fn frames_open_once_in_order_and_unaltered() {
        let ((mut cs, _co), (_rs, mut ro)) = pair();
        let mut frames = Vec::new();
        for i in 0..3u8 {
            let mut b = vec![i; 40];
            let t = cs.seal(&[i], &mut b).unwrap();
            assert_ne!(b, vec![i; 40], "encrypted");
            frames.push((b, t));
        }
        // Replay of frame 0, then frame 1 before frame 0 (reorder): refused.
        let mut out_of_order = frames[1].0.clone();
        assert!(ro.open(&[1], &mut out_of_order, &frames[1].1).is_err());
        let mut f0 = frames[0].0.clone();
        ro.open(&[0], &mut f0, &frames[0].1).unwrap();
        assert_eq!(f0, vec![0u8; 40]);
        let mut again = frames[0].0.clone();
        assert!(ro.open(&[0], &mut again, &frames[0].1).is_err(), "replay");
        // An altered byte, an altered header (AAD): refused.
        let mut flipped = frames[1].0.clone();
        flipped[3] ^= 1;
        assert!(ro.open(&[1], &mut flipped, &frames[1].1).is_err());
        let mut f1 = frames[1].0.clone();
        assert!(ro.open(&[9], &mut f1, &frames[1].1).is_err(), "header");
        let mut f1 = frames[1].0.clone();
        ro.open(&[1], &mut f1, &frames[1].1).unwrap();
        assert_eq!(f1, vec![1u8; 40]);
    }

    #[test]
    fn directions_and_connections_have_their_own_keys() {
        let ((mut cs, mut co), (mut rs, mut ro)) = pair();
        let mut b = b"hello".to_vec();
        let t = cs.seal(&[], &mut b).unwrap();
        // The client's own opener (other direction) cannot open what it sealed: no reflection.
        let mut r = b.clone();
        assert!(co.open(&[], &mut r, &t).is_err());
        ro.open(&[], &mut b, &t).unwrap();
        assert_eq!(b, b"hello");
        let mut b = b"back".to_vec();
        let t = rs.seal(&[], &mut b).unwrap();
        // Another connection (other client nonce) cannot open it.
        let (_, mut other) = keys(
            b"0123456789abcdef-secret",
            false,
            &[1; 32],
            &[3; 32],
            WorkerId {
                partition: 4,
                attempt: 1,
            },
        );
        assert!(other.open(&[], &mut b.clone(), &t).is_err());
        co.open(&[], &mut b, &t).unwrap();
        assert_eq!(b, b"back");
    }
}
