//! Which local user is at the other end of a loopback connection.
//!
//! A TCP port has no owner: without tokens, any local user could call the
//! daemon over loopback, and read through it the memories its `0600` files
//! keep from them. So each loopback connection is looked up once, when it
//! is accepted, in the kernel's socket table (Linux `sock_diag` netlink, an
//! exact lookup by the connection's four addresses, also among sockets
//! bound to `lo`: the caller's own socket and the user owning it).
//! [`super::auth::require_token`] then refuses, when no token is
//! configured, a caller who is neither the daemon's user nor root, and a
//! caller the lookup finds no owner for (a socket already closed, whose
//! request would still be served). With tokens, a token is what lets a
//! caller in, whoever it is.
//!
//! Not looked up: peers that are not loopback addresses, and every peer off
//! Linux or where the daemon may not open a `sock_diag` socket (a sandbox
//! denying netlink; one warning line says so): only tokens keep other
//! users out there.

use axum::extract::connect_info::Connected;
use axum::serve::IncomingStream;
use std::net::SocketAddr;

/// What the socket table says of one connection's caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeerUser {
    /// The user owning the caller's socket.
    User(u32),
    /// Looked up, and no owner found: the caller's socket is gone or hides.
    Unknown,
    /// Not looked up (see the module docs).
    NotLooked,
}

impl PeerUser {
    /// The owner of the socket connected from `peer` to `server`, looked up
    /// when `peer` is a loopback address.
    pub fn of(peer: SocketAddr, server: SocketAddr) -> PeerUser {
        let peer = SocketAddr::new(peer.ip().to_canonical(), peer.port());
        if !peer.ip().is_loopback() {
            return PeerUser::NotLooked;
        }
        // A wildcard listener's own address is the one the caller dialled:
        // on loopback, the caller's own address.
        let server_ip = server.ip().to_canonical();
        let server = SocketAddr::new(if server_ip.is_unspecified() { peer.ip() } else { server_ip }, server.port());
        owner_of(peer, server)
    }

    /// Why a call on this connection is refused when no token is
    /// configured: another user than the daemon's (root aside), or none
    /// found; `None` to let it through.
    pub fn refusal(&self) -> Option<String> {
        match *self {
            PeerUser::User(uid) if uid != 0 && Some(uid) != own_uid() => Some(format!("the caller is another local user (uid {uid})")),
            PeerUser::Unknown => Some("the kernel shows no owner for the caller's socket (closed, or hidden from the lookup)".to_string()),
            _ => None,
        }
    }
}

impl Connected<IncomingStream<'_, tokio::net::TcpListener>> for PeerUser {
    fn connect_info(stream: IncomingStream<'_, tokio::net::TcpListener>) -> Self {
        match stream.io().local_addr() {
            Ok(server) => PeerUser::of(*stream.remote_addr(), server),
            Err(_) => PeerUser::Unknown,
        }
    }
}

/// The uid the daemon runs as (effective).
fn own_uid() -> Option<u32> {
    #[cfg(unix)]
    return Some(rustix::process::geteuid().as_raw());
    #[cfg(not(unix))]
    None
}

/// The owner of the TCP socket whose local address is `local` and remote
/// address `remote` (for a connection accepted from `peer` on `server`, the
/// caller's socket: `owner_of(peer, server)`).
#[cfg(target_os = "linux")]
pub fn owner_of(local: SocketAddr, remote: SocketAddr) -> PeerUser {
    // Sockets bound to a device are found only by naming it: `lo` is
    // interface 1 in every network namespace.
    let found = sock_diag::owner(local, remote, 0).and_then(|unbound| match unbound {
        Some(uid) => Ok(Some(uid)),
        None => sock_diag::owner(local, remote, 1),
    });
    match found {
        Ok(Some(uid)) => PeerUser::User(uid),
        Ok(None) => PeerUser::Unknown,
        // Out of descriptors or memory (a flood): not known, so refused.
        Err(e) if !denied(&e) => {
            tracing::debug!(error = %e, "cannot look up a loopback caller now");
            PeerUser::Unknown
        }
        Err(e) => {
            static WARNED: std::sync::Once = std::sync::Once::new();
            WARNED.call_once(|| tracing::warn!(target: "mentisdb::security", "cannot look up the owners of loopback callers ({e}): without tokens, other local users can call this daemon; add a token (mentisdbd token add)"));
            PeerUser::NotLooked
        }
    }
}

/// Whether `e` says this process may not use `sock_diag` at all (a
/// sandbox, a kernel without it), rather than not now.
#[cfg(target_os = "linux")]
fn denied(e: &std::io::Error) -> bool {
    use rustix::io::Errno;
    let errno = e.raw_os_error().map(Errno::from_raw_os_error);
    e.kind() == std::io::ErrorKind::PermissionDenied || [Errno::PERM, Errno::ACCESS, Errno::AFNOSUPPORT, Errno::PROTONOSUPPORT, Errno::NOSYS, Errno::NOPROTOOPT].into_iter().any(|d| errno == Some(d))
}

/// Not looked up off Linux.
#[cfg(not(target_os = "linux"))]
pub fn owner_of(_local: SocketAddr, _remote: SocketAddr) -> PeerUser {
    PeerUser::NotLooked
}

/// The `NETLINK_SOCK_DIAG` exchange: one `SOCK_DIAG_BY_FAMILY` request
/// naming the socket exactly (`inet_diag_req_v2`), one `inet_diag_msg`
/// (or an error) back. Layouts from `linux/inet_diag.h`, `linux/netlink.h`.
#[cfg(target_os = "linux")]
mod sock_diag {
    use rustix::net::netlink::{SocketAddrNetlink, SOCK_DIAG};
    use rustix::net::{AddressFamily, RecvFlags, SendFlags, SocketFlags, SocketType};
    use std::io;
    use std::net::{IpAddr, SocketAddr};

    const SOCK_DIAG_BY_FAMILY: u16 = 20;
    const NLM_F_REQUEST: u16 = 1;
    const NLMSG_ERROR: u16 = 2;
    const NLMSG_HEADER: usize = 16;
    const IPPROTO_TCP: u8 = 6;
    /// `inet_diag_msg`: family, state, timer, retrans (4), id (48), expires,
    /// rqueue, wqueue (12), then the uid and the inode.
    const UID_AT: usize = NLMSG_HEADER + 4 + 48 + 12;
    const INODE_AT: usize = UID_AT + 4;

    /// The uid owning the socket bound to `interface` (0: any unbound);
    /// `Ok(None)` when there is no such socket, or one with no owner to
    /// show (a closed one waiting out its time, inode 0, uid 0).
    pub(super) fn owner(local: SocketAddr, remote: SocketAddr, interface: u32) -> io::Result<Option<u32>> {
        let family = match (local.ip(), remote.ip()) {
            (IpAddr::V4(_), IpAddr::V4(_)) => libc_family(AddressFamily::INET),
            (IpAddr::V6(_), IpAddr::V6(_)) => libc_family(AddressFamily::INET6),
            _ => return Ok(None),
        };
        let mut request = Vec::with_capacity(NLMSG_HEADER + 56);
        request.extend_from_slice(&((NLMSG_HEADER + 56) as u32).to_ne_bytes());
        request.extend_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
        request.extend_from_slice(&NLM_F_REQUEST.to_ne_bytes());
        request.extend_from_slice(&1u32.to_ne_bytes()); // sequence number
        request.extend_from_slice(&0u32.to_ne_bytes()); // port id: the kernel's
        // inet_diag_req_v2: family, protocol, extensions, padding, states (all).
        request.extend_from_slice(&[family, IPPROTO_TCP, 0, 0]);
        request.extend_from_slice(&u32::MAX.to_ne_bytes());
        // inet_diag_sockid: the socket's own port and address as source.
        request.extend_from_slice(&local.port().to_be_bytes());
        request.extend_from_slice(&remote.port().to_be_bytes());
        request.extend_from_slice(&address_bytes(local.ip()));
        request.extend_from_slice(&address_bytes(remote.ip()));
        request.extend_from_slice(&interface.to_ne_bytes());
        request.extend_from_slice(&[0xff; 8]); // INET_DIAG_NOCOOKIE
        let socket = rustix::net::socket_with(AddressFamily::NETLINK, SocketType::DGRAM, SocketFlags::CLOEXEC, Some(SOCK_DIAG))?;
        rustix::net::sendto(&socket, &request, SendFlags::empty(), &SocketAddrNetlink::new(0, 0))?;
        let mut reply = [0u8; 512];
        let (got, _) = rustix::net::recv(&socket, &mut reply, RecvFlags::empty())?;
        let reply = &reply[..got.min(reply.len())];
        let u16_at = |at: usize| reply.get(at..at + 2).map(|b| u16::from_ne_bytes([b[0], b[1]]));
        let u32_at = |at: usize| reply.get(at..at + 4).map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]));
        match u16_at(4) {
            Some(SOCK_DIAG_BY_FAMILY) => Ok(u32_at(UID_AT).filter(|_| u32_at(INODE_AT).is_some_and(|inode| inode != 0))),
            // An error answer (ENOENT: not a socket of this namespace).
            Some(NLMSG_ERROR) => Ok(None),
            _ => Err(io::Error::other("an unexpected sock_diag answer")),
        }
    }

    fn libc_family(f: AddressFamily) -> u8 {
        f.as_raw() as u8
    }

    /// An address as `inet_diag_sockid` holds it: 16 bytes, network order,
    /// an IPv4 address in the first four.
    fn address_bytes(ip: IpAddr) -> [u8; 16] {
        let mut out = [0u8; 16];
        match ip {
            IpAddr::V4(v4) => out[..4].copy_from_slice(&v4.octets()),
            IpAddr::V6(v6) => out.copy_from_slice(&v6.octets()),
        }
        out
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// The kernel names this process's user as the owner of both ends of a
    /// loopback connection it made, and of none that is not there.
    #[test]
    fn a_loopback_connection_belongs_to_the_user_who_made_it() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let server = listener.local_addr().unwrap();
        let client = std::net::TcpStream::connect(server).unwrap();
        let (_accepted, peer) = listener.accept().unwrap();
        assert_eq!(peer, client.local_addr().unwrap());
        let me = PeerUser::User(own_uid().unwrap());
        assert_eq!(PeerUser::of(peer, server), me, "the caller's socket, from the accepted connection's addresses");
        assert_eq!(owner_of(server, peer), me, "and the daemon's own end");
        let wildcard: SocketAddr = format!("0.0.0.0:{}", server.port()).parse().unwrap();
        assert_eq!(PeerUser::of(peer, wildcard), me, "a wildcard listener's address stands for the one dialled");
        let mapped: SocketAddr = format!("[::ffff:127.0.0.1]:{}", peer.port()).parse().unwrap();
        assert_eq!(PeerUser::of(mapped, server), me, "an IPv4-mapped caller is the IPv4 one");
        assert_eq!(me.refusal(), None, "the daemon's own user is let in");
        let nowhere: SocketAddr = "127.0.0.1:1".parse().unwrap();
        assert_eq!(owner_of(nowhere, server), PeerUser::Unknown, "no such socket: no owner, refused");
        assert!(PeerUser::Unknown.refusal().is_some());
        assert_eq!(PeerUser::of("10.0.0.1:5".parse().unwrap(), server), PeerUser::NotLooked, "not looked up off loopback");
        assert_eq!(PeerUser::NotLooked.refusal(), None);
        assert_eq!(PeerUser::User(0).refusal(), None, "root may do anything anyway");
        assert_eq!(PeerUser::User(65534).refusal().is_some(), own_uid() != Some(65534));
    }
}
