#!/usr/bin/env bash
# Installs the Debian packages the data plane and the system tests need. Idempotent; run as root.
set -euo pipefail
# Data plane and system tests: wireguard-tools .. procps. Build tools: better-sqlite3 compiles from source with
# node-gyp when no prebuilt binary can be downloaded (Node's headers come with the nodejs package).
# systemd: `systemd-analyze verify` checks the shipped units (bin/systemd). rsyslog: the traffic-logging system test.
# ulogd2 + ulogd2-json: traffic logging's kernel source (NFLOG read by ulogd, JSON to the panel's socket).
# strongSwan (charon, swanctl; extauth: eap-mschapv2; extra: eap-identity, kernel-libipsec; standard: openssl for MD4): the IKEv2 gateway.
# unbound + dnsutils (dig): the DNS resolver and its tests. vsftpd: the backup FTP upload test. chromium: the
# browser tier (playwright-core drives Debian's chromium; no browser is ever downloaded). postgresql: the platform's
# scale-out store (the store contract suite and `store migrate` tests start a private server from its binaries).
PKGS=(wireguard-tools wireguard-go iproute2 iptables ipset conntrack iputils-ping redis-server procps g++ make python3 iperf3 systemd rsyslog
  strongswan-swanctl charon-systemd strongswan-charon libcharon-extra-plugins libcharon-extauth-plugins libstrongswan-standard-plugins libstrongswan-extra-plugins unbound dnsutils vsftpd chromium ulogd2 ulogd2-json
  postgresql)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "system packages present: ${PKGS[*]}"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "need root to install: ${missing[*]} (run: sudo $0)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "installed: ${missing[*]}"
