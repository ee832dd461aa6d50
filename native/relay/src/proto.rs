//! Wire format shared by the relay and the client: handshake messages, frame headers, HMAC.
//! Handshake integers are big-endian; a frame's length is an unsigned LEB128 varint. See the
//! crate documentation and docs/RELAY_PROTOCOL.md.

use std::io::{self, Read, Write};
use std::time::Duration;

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::seal::{Opener, Sealer, TAG_LEN};
use crate::WorkerId;

type HmacSha256 = Hmac<Sha256>;

pub(crate) const HELLO_MAGIC: &[u8; 8] = b"FDLRELAY";
pub(crate) const AUTH_MAGIC: &[u8; 8] = b"FDLRAUTH";
/// 5: a sealed snapshot travels in chunks of [`SNAPSHOT_CHUNK`] bytes, each with its own tag.
pub(crate) const VERSION: u16 = 5;
pub(crate) const NONCE_LEN: usize = 32;
pub(crate) const MAC_LEN: usize = 32;
/// HELLO (relay → client): magic, version, relay nonce.
pub(crate) const HELLO_LEN: usize = 8 + 2 + NONCE_LEN;
/// AUTH (client → relay): magic, version, client nonce, partition, attempt, heartbeat wish
/// (ms), flags, client tag.
pub(crate) const AUTH_LEN: usize = 8 + 2 + NONCE_LEN + 4 + 4 + 4 + 1 + MAC_LEN;
/// AUTH flag: frames after the handshake are sealed (ChaCha20-Poly1305, `seal.rs`). Both sides
/// must agree (a relay refuses a client whose flag differs with verdict `0x02`); both tags cover it.
pub(crate) const FLAG_SEALED: u8 = 0x01;
/// ACCEPT (relay → client) after the verdict byte: relay tag, heartbeat wish (ms), snapshot length.
pub(crate) const ACCEPT_LEN: usize = 1 + MAC_LEN + 4 + 8;
/// Plaintext bytes per sealed chunk of the snapshot (the last may be shorter; an empty snapshot
/// is one empty chunk). Each chunk is sealed under the next sequence number with the snapshot's
/// length as its AAD, so the relay needs a buffer of this size per connection, not one of the
/// snapshot's size.
pub(crate) const SNAPSHOT_CHUNK: usize = 1 << 20;
/// Heartbeat wishes are clamped to at least this (a peer cannot make us spin).
pub(crate) const MIN_HEARTBEAT: Duration = Duration::from_millis(5);
/// Minimum secret length, both sides.
pub(crate) const MIN_SECRET_LEN: usize = 16;

/// Domain-separation tags: the client's and the relay's proofs can never be swapped (reflection).
const CLIENT_TAG: &[u8] = b"ferrodl-relay/v3/client-auth\0";
const RELAY_TAG: &[u8] = b"ferrodl-relay/v3/relay-auth\0";

/// Handshake verdict byte sent by the relay after AUTH.
pub(crate) const VERDICT_REJECT_AUTH: u8 = 0x00;
pub(crate) const VERDICT_ACCEPT: u8 = 0x01;
pub(crate) const VERDICT_REJECT_PROTOCOL: u8 = 0x02;
pub(crate) const VERDICT_UNAVAILABLE: u8 = 0x03;
/// A newer attempt of the same partition is connected: this (older) attempt is refused.
pub(crate) const VERDICT_SUPERSEDED: u8 = 0x04;

/// Frame types after the handshake: `[type u8][len: LEB128 varint, 1..=5 bytes][len bytes]`.
/// The varint must be minimal and at most `u32::MAX`, so every length has one header (it is the
/// AAD of a sealed frame) and a reader never takes more than 6 bytes to learn a frame's size.
pub(crate) const MAX_FRAME_HEADER_LEN: usize = 6;
/// Bytes of a length varint for a `u32`.
const MAX_LEN_BYTES: usize = 5;
/// worker → relay: one encoded update.
pub(crate) const T_UPDATE: u8 = 0x01;
/// worker → relay: no more updates, with the worker's final state for
/// [`crate::MasterState::finish`] (empty for none; at most `max_message_bytes`); answer
/// FINISH_ACK once all earlier updates are applied and the state is taken.
pub(crate) const T_FINISH: u8 = 0x02;
/// both ways: heartbeat, empty.
pub(crate) const T_PING: u8 = 0x03;
/// worker → relay: UTF-8 report of a worker that made no progress (stall watchdog).
pub(crate) const T_STALL: u8 = 0x04;
/// relay node → its parent (a relay tree): answer FLUSH_ACK once every earlier UPDATE of this
/// connection is applied at the root.
pub(crate) const T_FLUSH: u8 = 0x05;
/// relay → worker: an update of another worker.
pub(crate) const T_RELAYED: u8 = 0x11;
/// relay → worker: every update this worker sent has been applied.
pub(crate) const T_FINISH_ACK: u8 = 0x12;
/// relay → worker: UTF-8 reason, then the relay closes the connection.
pub(crate) const T_ERROR: u8 = 0x13;
/// parent → relay node: answers the connection's FLUSHes, in order.
pub(crate) const T_FLUSH_ACK: u8 = 0x14;
/// Upper bound of an ERROR frame's reason and of a STALL report.
pub(crate) const MAX_ERROR_LEN: usize = 4096;

/// Which side computes the tag.
#[derive(Clone, Copy)]
pub(crate) enum Side {
    Client,
    Relay,
}

/// HMAC-SHA256(secret, tag || relay_nonce || client_nonce || partition || attempt || flags).
pub(crate) fn auth_tag(
    secret: &[u8],
    side: Side,
    relay_nonce: &[u8; NONCE_LEN],
    client_nonce: &[u8; NONCE_LEN],
    worker: WorkerId,
    flags: u8,
) -> [u8; MAC_LEN] {
    mac_for(secret, side, relay_nonce, client_nonce, worker, flags)
        .finalize()
        .into_bytes()
        .into()
}

/// Constant-time check of a tag received from the other side.
pub(crate) fn verify_tag(
    secret: &[u8],
    side: Side,
    relay_nonce: &[u8; NONCE_LEN],
    client_nonce: &[u8; NONCE_LEN],
    worker: WorkerId,
    flags: u8,
    tag: &[u8],
) -> bool {
    mac_for(secret, side, relay_nonce, client_nonce, worker, flags)
        .verify_slice(tag)
        .is_ok()
}

fn mac_for(
    secret: &[u8],
    side: Side,
    relay_nonce: &[u8; NONCE_LEN],
    client_nonce: &[u8; NONCE_LEN],
    worker: WorkerId,
    flags: u8,
) -> HmacSha256 {
    // HMAC accepts keys of any length; this cannot fail.
    let mut mac = HmacSha256::new_from_slice(secret).expect("HMAC takes any key length");
    mac.update(match side {
        Side::Client => CLIENT_TAG,
        Side::Relay => RELAY_TAG,
    });
    mac.update(relay_nonce);
    mac.update(client_nonce);
    mac.update(&worker.partition.to_be_bytes());
    mac.update(&worker.attempt.to_be_bytes());
    mac.update(&[flags]);
    mac
}

/// 32 bytes from the operating system's CSPRNG.
pub(crate) fn random_nonce() -> Result<[u8; NONCE_LEN], String> {
    let mut n = [0u8; NONCE_LEN];
    getrandom::fill(&mut n).map_err(|e| format!("no randomness from the OS: {e}"))?;
    Ok(n)
}

pub(crate) fn encode_hello(nonce: &[u8; NONCE_LEN]) -> [u8; HELLO_LEN] {
    let mut b = [0u8; HELLO_LEN];
    b[..8].copy_from_slice(HELLO_MAGIC);
    b[8..10].copy_from_slice(&VERSION.to_be_bytes());
    b[10..].copy_from_slice(nonce);
    b
}

pub(crate) fn parse_hello(b: &[u8; HELLO_LEN]) -> Result<[u8; NONCE_LEN], String> {
    if &b[..8] != HELLO_MAGIC {
        return Err("the peer is not a ferrodl relay (bad greeting)".into());
    }
    let v = u16::from_be_bytes([b[8], b[9]]);
    if v != VERSION {
        return Err(format!(
            "relay speaks protocol version {v}, this client speaks {VERSION}"
        ));
    }
    let mut n = [0u8; NONCE_LEN];
    n.copy_from_slice(&b[10..]);
    Ok(n)
}

pub(crate) struct Auth {
    pub client_nonce: [u8; NONCE_LEN],
    pub worker: WorkerId,
    /// How often the client wants to hear from the relay when the relay is otherwise idle.
    pub heartbeat_ms: u32,
    /// [`FLAG_SEALED`] or 0.
    pub flags: u8,
    pub tag: [u8; MAC_LEN],
}

/// Heartbeat period for an I/O timeout: three heartbeats fit in one timeout.
pub(crate) fn heartbeat_for(io_timeout: Duration) -> Duration {
    (io_timeout / 3).max(MIN_HEARTBEAT)
}

/// Milliseconds for the wire (saturating).
pub(crate) fn to_ms(d: Duration) -> u32 {
    u32::try_from(d.as_millis()).unwrap_or(u32::MAX)
}

/// The interval at which one side sends heartbeats: its own period, or sooner if the peer
/// (whose I/O timeout may be shorter) asked for it.
pub(crate) fn heartbeat_with(own: Duration, peer_wish_ms: u32) -> Duration {
    own.min(Duration::from_millis(peer_wish_ms as u64))
        .max(MIN_HEARTBEAT)
}

pub(crate) fn encode_auth(a: &Auth) -> [u8; AUTH_LEN] {
    let mut b = [0u8; AUTH_LEN];
    b[..8].copy_from_slice(AUTH_MAGIC);
    b[8..10].copy_from_slice(&VERSION.to_be_bytes());
    b[10..42].copy_from_slice(&a.client_nonce);
    b[42..46].copy_from_slice(&a.worker.partition.to_be_bytes());
    b[46..50].copy_from_slice(&a.worker.attempt.to_be_bytes());
    b[50..54].copy_from_slice(&a.heartbeat_ms.to_be_bytes());
    b[54] = a.flags;
    b[55..].copy_from_slice(&a.tag);
    b
}

pub(crate) fn parse_auth(b: &[u8; AUTH_LEN]) -> Result<Auth, String> {
    if &b[..8] != AUTH_MAGIC {
        return Err("not a ferrodl relay client (bad authentication magic)".into());
    }
    let v = u16::from_be_bytes([b[8], b[9]]);
    if v != VERSION {
        return Err(format!(
            "client speaks protocol version {v}, this relay speaks {VERSION}"
        ));
    }
    let mut client_nonce = [0u8; NONCE_LEN];
    client_nonce.copy_from_slice(&b[10..42]);
    let partition = u32::from_be_bytes(b[42..46].try_into().expect("4 bytes"));
    let attempt = u32::from_be_bytes(b[46..50].try_into().expect("4 bytes"));
    let heartbeat_ms = u32::from_be_bytes(b[50..54].try_into().expect("4 bytes"));
    let flags = b[54];
    if flags & !FLAG_SEALED != 0 {
        return Err(format!("unknown AUTH flags {flags:#04x}"));
    }
    let mut tag = [0u8; MAC_LEN];
    tag.copy_from_slice(&b[55..]);
    Ok(Auth {
        client_nonce,
        worker: WorkerId { partition, attempt },
        heartbeat_ms,
        flags,
        tag,
    })
}

/// Writes one frame; `payload` is written straight from the caller's buffer (never copied when
/// it is larger than the writer's buffer). Returns the bytes written.
pub(crate) fn write_frame<W: Write>(w: &mut W, ty: u8, payload: &[u8]) -> io::Result<u64> {
    let (h, n) = header(ty, payload.len())?;
    w.write_all(&h[..n])?;
    w.write_all(payload)?;
    Ok((n + payload.len()) as u64)
}

/// Writes one frame, sealing it when `seal` is given (the payload is then encrypted in place and
/// followed by the 16-byte tag; the header is authenticated as AAD). Returns the bytes written.
pub(crate) fn write_frame_opt<W: Write>(
    w: &mut W,
    ty: u8,
    payload: &mut [u8],
    seal: Option<&mut Sealer>,
) -> io::Result<u64> {
    let Some(s) = seal else {
        return write_frame(w, ty, payload);
    };
    let (h, n) = header(ty, payload.len())?;
    let tag = s
        .seal(&h[..n], payload)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    w.write_all(&h[..n])?;
    w.write_all(payload)?;
    w.write_all(&tag)?;
    Ok((n + payload.len() + TAG_LEN) as u64)
}

/// The header of a frame and its length in bytes.
pub(crate) fn header(ty: u8, len: usize) -> io::Result<([u8; MAX_FRAME_HEADER_LEN], usize)> {
    let mut len = u32::try_from(len)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "frame longer than 4 GiB"))?;
    let mut h = [0u8; MAX_FRAME_HEADER_LEN];
    h[0] = ty;
    let mut n = 1;
    while len >= 0x80 {
        h[n] = (len as u8) | 0x80;
        len >>= 7;
        n += 1;
    }
    h[n] = len as u8;
    Ok((h, n + 1))
}

/// Makes room in `buf` for a frame body of `len` bytes the peer announced, checked against the
/// native memory budget and reserved fallibly, before any of it is read.
pub(crate) fn reserve_body(
    buf: &mut Vec<u8>,
    len: usize,
    what: &str,
) -> Result<(), ferrodl_memory::MemoryError> {
    ferrodl_memory::try_capacity(buf, len, || format!("{what} of {len} bytes"))
}

/// Reads a frame's payload of `len` bytes into `buf` (resized) and, when `open` is given, its
/// tag, and decrypts it. A frame that fails authentication is an `InvalidData` error.
pub(crate) fn read_body<R: Read>(
    r: &mut R,
    ty: u8,
    len: usize,
    buf: &mut Vec<u8>,
    open: Option<&mut Opener>,
) -> io::Result<()> {
    buf.clear();
    // read into the reserved capacity: zero-filling it first took 8 % of a 5 MB message's relay
    // CPU; `take` + `read_to_end` writes only what arrives
    let got = r.by_ref().take(len as u64).read_to_end(buf)?;
    if got != len {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("frame body cut short: {got} of {len} bytes"),
        ));
    }
    if let Some(o) = open {
        let mut tag = [0u8; TAG_LEN];
        r.read_exact(&mut tag)?;
        // The length varint is minimal, so this is the header as it was on the wire.
        let (h, n) = header(ty, len)?;
        o.open(&h[..n], buf, &tag)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    }
    Ok(())
}

/// Why reading a frame header failed.
pub(crate) enum HeaderError {
    /// Some bytes of the header arrived, then the stream ended or failed.
    Partial(io::Error),
    /// No byte of a new frame arrived: EOF is reported as `Ok(None)`, this is any other error.
    Io(io::Error),
    /// The length is not a minimal varint of at most 5 bytes and `u32::MAX` (a protocol error).
    Malformed(String),
}

/// Reads a frame header. `Ok(None)` is a clean end of stream at a frame boundary.
pub(crate) fn read_header<R: Read>(r: &mut R) -> Result<Option<(u8, usize)>, HeaderError> {
    let mut ty = [0u8; 1];
    loop {
        match r.read(&mut ty) {
            Ok(0) => return Ok(None),
            Ok(_) => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(HeaderError::Io(e)),
        }
    }
    let mut len = 0u64;
    for i in 0..MAX_LEN_BYTES {
        let mut b = [0u8; 1];
        r.read_exact(&mut b).map_err(HeaderError::Partial)?;
        let b = b[0];
        len |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            if i > 0 && b == 0 {
                return Err(HeaderError::Malformed(format!(
                    "frame of type {:#04x}: its length is not a minimal varint",
                    ty[0]
                )));
            }
            if len > u64::from(u32::MAX) {
                break;
            }
            return Ok(Some((ty[0], len as usize)));
        }
    }
    Err(HeaderError::Malformed(format!(
        "frame of type {:#04x}: its length varint is longer than 5 bytes or above 2^32 - 1",
        ty[0]
    )))
}

/// True for the error kinds a socket read/write timeout produces (platform dependent).
pub(crate) fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_bind_side_nonces_and_worker() {
        let s = b"0123456789abcdef-secret";
        let (rn, cn) = ([1u8; 32], [2u8; 32]);
        let w = WorkerId {
            partition: 3,
            attempt: 1,
        };
        let t = auth_tag(s, Side::Client, &rn, &cn, w, 0);
        assert!(verify_tag(s, Side::Client, &rn, &cn, w, 0, &t));
        assert!(!verify_tag(s, Side::Client, &rn, &cn, w, FLAG_SEALED, &t), "flags");
        assert!(!verify_tag(s, Side::Relay, &rn, &cn, w, 0, &t), "reflection");
        assert!(!verify_tag(s, Side::Client, &cn, &rn, w, 0, &t), "nonce order");
        assert!(!verify_tag(
            s,
            Side::Client,
            &rn,
            &cn,
            WorkerId {
                partition: 3,
                attempt: 2
            },
            0,
            &t
        ));
        assert!(!verify_tag(
            b"another-secret-of-16",
            Side::Client,
            &rn,
            &cn,
            w,
            0,
            &t
        ));
        assert!(
            !verify_tag(s, Side::Client, &rn, &cn, w, 0, &t[..31]),
            "truncated tag"
        );
        let a = Auth {
            client_nonce: cn,
            worker: w,
            heartbeat_ms: 777,
            flags: FLAG_SEALED,
            tag: t,
        };
        let back = parse_auth(&encode_auth(&a)).unwrap();
        assert_eq!(
            (back.client_nonce, back.worker, back.heartbeat_ms, back.flags, back.tag),
            (cn, w, 777, FLAG_SEALED, t)
        );
        let mut odd = encode_auth(&a);
        odd[54] = 0x80;
        assert!(parse_auth(&odd).is_err(), "unknown flags");
        assert_eq!(
            heartbeat_with(Duration::from_secs(1), 200),
            Duration::from_millis(200)
        );
        assert_eq!(
            heartbeat_with(Duration::from_millis(100), 200),
            Duration::from_millis(100)
        );
        assert_eq!(heartbeat_with(Duration::from_secs(1), 0), MIN_HEARTBEAT);
        assert_eq!(parse_hello(&encode_hello(&rn)).unwrap(), rn);
        assert_ne!(random_nonce().unwrap(), random_nonce().unwrap());
    }

    #[test]
    fn header_roundtrip_and_partial() {
        for len in [0usize, 1, 127, 128, 1_600, 16_383, 16_384, 70_000, u32::MAX as usize] {
            let (h, n) = header(T_RELAYED, len).unwrap();
            let mut r = &h[..n];
            assert_eq!(read_header(&mut r).ok().unwrap(), Some((T_RELAYED, len)), "{len}");
            assert!(r.is_empty());
            let want = if len < 128 { 2 } else if len < 16_384 { 3 } else if len < 1 << 21 { 4 } else { 6 };
            assert_eq!(n, want, "{len}");
        }
        assert!(header(T_UPDATE, u32::MAX as usize + 1).is_err());
        for bad in [
            &[T_UPDATE, 0x80, 0x00][..],
            &[T_UPDATE, 0xff, 0xff, 0xff, 0xff, 0x10][..],
            &[T_UPDATE, 0xff, 0xff, 0xff, 0xff, 0x8f, 0x01][..],
        ] {
            let mut r = bad;
            assert!(matches!(read_header(&mut r), Err(HeaderError::Malformed(_))), "{bad:x?}");
        }
        let mut v = Vec::new();
        assert_eq!(write_frame(&mut v, T_UPDATE, b"abc").unwrap(), 5);
        let mut r = &v[..];
        assert_eq!(read_header(&mut r).ok().unwrap(), Some((T_UPDATE, 3)));
        let mut empty: &[u8] = &[];
        assert!(matches!(read_header(&mut empty), Ok(None)));
        let mut partial: &[u8] = &[T_UPDATE, 0x81];
        assert!(matches!(
            read_header(&mut partial),
            Err(HeaderError::Partial(_))
        ));
    }
}
