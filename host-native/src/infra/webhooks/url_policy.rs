//! Where webhooks may deliver: http or https only, no `localhost`, no
//! internal address unless `MENTISDB_WEBHOOK_ALLOWED_CIDRS` allows it
//! ([`UrlPolicy`]); checked at registration and, through the delivery
//! client's own resolver ([`PinnedResolver`]), at every connection, so a
//! name rebound to an internal address after the check is never reached.

use super::WebhookError;
use ipnet::IpNet;
use mentisdb_core::webhooks::WebhookTargets;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::Arc;

/// The broadest allowed network (`/8`), so an allow-list cannot switch the rule off.
pub(super) const MIN_PREFIX: u8 = 8;

/// Which targets webhooks may reach: public addresses, plus the allowed networks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UrlPolicy {
    allowed: Vec<IpNet>,
}

impl UrlPolicy {
    /// Parses `MENTISDB_WEBHOOK_ALLOWED_CIDRS`: CIDRs or bare addresses,
    /// separated by commas or spaces; each at most a /8.
    pub fn parse(list: &str) -> Result<UrlPolicy, WebhookError> {
        let mut allowed = Vec::new();
        for entry in list.split(|c: char| c == ',' || c.is_whitespace()).filter(|e| !e.is_empty()) {
            let net = match entry.parse::<IpNet>() {
                Ok(net) => net,
                Err(_) => entry.parse::<IpAddr>().map(IpNet::from).map_err(|_| WebhookError::NotCidr(entry.to_string()))?,
            };
            if net.prefix_len() < MIN_PREFIX {
                return Err(WebhookError::TooBroad(entry.to_string()));
            }
            allowed.push(net.trunc());
        }
        Ok(UrlPolicy { allowed })
    }

    /// Whether a delivery may go to `ip`.
    pub fn permits(&self, ip: IpAddr) -> bool {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
            v4 => v4,
        };
        !is_internal(ip) || self.allowed.iter().any(|net| net.contains(&ip))
    }

    pub(super) fn refused(ip: IpAddr) -> String {
        format!("webhook URL points to an internal address ({ip}); loopback, private, link-local and similar addresses need MENTISDB_WEBHOOK_ALLOWED_CIDRS")
    }

}

/// Resolves a host name to its addresses: [`system_lookup`] in the daemon;
/// tests hand in their own (a name that changes its answer).
pub type Lookup = Arc<dyn Fn(String) -> std::pin::Pin<Box<dyn std::future::Future<Output = std::io::Result<Vec<IpAddr>>> + Send>> + Send + Sync>;

/// The system's resolver.
pub fn system_lookup() -> Lookup {
    Arc::new(|name: String| Box::pin(async move { Ok(tokio::net::lookup_host((name.as_str(), 0)).await?.map(|a| a.ip()).collect()) }))
}

/// The delivery client's resolver: resolves a name once, refuses it when
/// any address is not permitted, and gives the client exactly the checked
/// addresses to connect to (the check and the connection see one answer).
pub struct PinnedResolver {
    policy: UrlPolicy,
    lookup: Lookup,
}

impl PinnedResolver {
    /// A resolver that lets through only what `policy` permits, asking `lookup`.
    pub fn new(policy: UrlPolicy, lookup: Lookup) -> Self {
        PinnedResolver { policy, lookup }
    }
}

impl reqwest::dns::Resolve for PinnedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let (policy, lookup, host) = (self.policy.clone(), self.lookup.clone(), name.as_str().to_string());
        Box::pin(async move {
            let ips = lookup(host.clone()).await?;
            if ips.is_empty() {
                return Err(format!("{host} resolves to no address").into());
            }
            if let Some(bad) = ips.iter().find(|ip| !policy.permits(**ip)) {
                tracing::warn!(target: "mentisdb::webhooks", host = %host, address = %bad, "webhook host resolves to an internal address; not delivered");
                return Err(UrlPolicy::refused(*bad).into());
            }
            let addrs: reqwest::dns::Addrs = Box::new(ips.into_iter().map(|ip| std::net::SocketAddr::new(ip, 0)));
            Ok(addrs)
        })
    }
}

impl WebhookTargets for UrlPolicy {
    fn check_url(&self, url: &str) -> Result<(), String> {
        let parsed = reqwest::Url::parse(url).map_err(|e| format!("invalid webhook URL: {e}"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(format!("webhook URL scheme '{}' is not allowed; use http or https", parsed.scheme()));
        }
        match parsed.host() {
            None => Err("webhook URL has no host".to_string()),
            Some(url::Host::Domain(d)) => {
                let d = d.trim_end_matches('.').to_ascii_lowercase();
                if d == "localhost" || d.ends_with(".localhost") {
                    Err("webhook URLs pointing to localhost are not allowed; use an address listed in MENTISDB_WEBHOOK_ALLOWED_CIDRS".to_string())
                } else {
                    Ok(())
                }
            }
            Some(url::Host::Ipv4(ip)) => self.permits(IpAddr::V4(ip)).then_some(()).ok_or_else(|| Self::refused(IpAddr::V4(ip))),
            Some(url::Host::Ipv6(ip)) => self.permits(IpAddr::V6(ip)).then_some(()).ok_or_else(|| Self::refused(IpAddr::V6(ip))),
        }
    }
}

/// Addresses inside a network that is not the public internet.
fn is_internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_internal_v4(v4),
        IpAddr::V6(v6) => is_internal_v6(v6),
    }
}

fn is_internal_v4(v4: Ipv4Addr) -> bool {
    let [a, b, c, _] = v4.octets();
    a == 0 // "this network" 0.0.0.0/8: 0.x.y.z reaches the host itself on Linux
        || v4.is_loopback()
        || v4.is_private()
        || v4.is_link_local()
        || v4.is_unspecified()
        || v4.is_broadcast()
        || v4.is_multicast()
        || (a == 100 && (b & 0xc0) == 64) // CGNAT 100.64.0.0/10
        || (a == 192 && b == 0 && (c == 0 || c == 2)) // protocol assignments, TEST-NET-1
        || (a == 198 && b == 51 && c == 100) // TEST-NET-2
        || (a == 203 && b == 0 && c == 113) // TEST-NET-3
        || (a == 198 && (b & 0xfe) == 18) // benchmarking 198.18.0.0/15
        || (a == 192 && b == 88 && c == 99) // 6to4 relay anycast
        || a >= 240 // reserved
}

fn is_internal_v6(v6: Ipv6Addr) -> bool {
    if v6.is_loopback() || v6.is_unspecified() || v6.is_multicast() {
        return true;
    }
    let seg = v6.segments();
    // IPv4-translated ::ffff:0:a.b.c.d (SIIT) carries an IPv4 address too.
    let translated = (seg[..4] == [0, 0, 0, 0] && seg[4] == 0xffff && seg[5] == 0).then(|| Ipv4Addr::new((seg[6] >> 8) as u8, seg[6] as u8, (seg[7] >> 8) as u8, seg[7] as u8));
    if let Some(v4) = v6.to_ipv4_mapped().or_else(|| v6.to_ipv4()).or(translated) {
        return is_internal_v4(v4);
    }
    (seg[0] == 0x64 && seg[1] == 0xff9b) // NAT64 (well-known and local-use) reaches IPv4 targets
        || (seg[0] == 0x100 && seg[1..4] == [0, 0, 0]) // discard-only 100::/64
        || (seg[0] == 0x2001 && seg[1] < 0x200) // IETF protocol assignments 2001::/23 (Teredo, benchmarking, ORCHID)
        || (seg[0] == 0x3fff && seg[1] < 0x1000) // documentation 3fff::/20
        || seg[0] == 0x5f00 // segment routing 5f00::/16
        || seg[0] == 0x2002 // 6to4
        || (seg[0] & 0xfe00) == 0xfc00 // unique local
        || (seg[0] & 0xffc0) == 0xfe80 // link-local
        || (seg[0] & 0xffc0) == 0xfec0 // site-local
        || (seg[0] == 0x2001 && seg[1] == 0x0db8) // documentation
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_targets_are_refused_unless_allowed() {
        let strict = UrlPolicy::default();
        for url in ["http://127.0.0.1:8080/x", "http://10.1.2.3/", "http://[::1]/", "http://169.254.169.254/latest", "http://[::ffff:192.168.0.1]/", "http://localhost/", "http://a.localhost./"] {
            assert!(strict.check_url(url).is_err(), "{url}");
        }
        assert!(strict.check_url("https://hooks.example.com/in").is_ok());
        assert!(strict.check_url("http://93.184.216.34/").is_ok());
        assert!(strict.check_url("ftp://93.184.216.34/").unwrap_err().contains("scheme"));
        let allowed = UrlPolicy::parse("127.0.0.1, 10.8.0.0/24").unwrap();
        assert!(allowed.check_url("http://127.0.0.1:8080/x").is_ok());
        assert!(allowed.check_url("http://10.8.0.9/").is_ok());
        assert!(allowed.check_url("http://10.9.0.1/").is_err());
        assert!(allowed.check_url("http://localhost/").is_err(), "a host name 'localhost' stays refused");
        assert!(UrlPolicy::parse("0.0.0.0/1").unwrap_err().to_string().contains("broader than /8"));
        assert!(UrlPolicy::parse("nonsense").is_err());
        assert_eq!(UrlPolicy::parse(" ").unwrap(), UrlPolicy::default());
        // 0.0.0.0/8, IPv4 in IPv6 (mapped, compatible, translated), special-purpose ranges.
        for url in ["http://0.0.0.1/", "http://0.1.2.3/", "http://[::ffff:0:7f00:1]/", "http://[::ffff:127.0.0.1]/", "http://[::127.0.0.1]/", "http://[64:ff9b::7f00:1]/", "http://[100::1]/", "http://[2001:2::1]/", "http://[3fff::1]/", "http://192.88.99.1/"] {
            assert!(strict.check_url(url).is_err(), "{url}");
        }
        assert!(strict.check_url("http://[2606:4700::1111]/").is_ok(), "a public IPv6 address");
    }
}
