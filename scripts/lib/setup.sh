# Shared by scripts/test and scripts/demo: finds or installs (apt, as root) what the
# build needs and decides which backends this machine can build.
# Sets DK_PRESETS (configure presets to build, cpu first) and prints what it found.

dk_log() { printf '[deltakit] %s\n' "$*"; }

dk_missing_packages() {
  local missing=() p
  for p in "$@"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p"); done
  printf '%s\n' "${missing[@]}"
}

# Installs the packages that are missing; returns 1 (after saying why) when it cannot.
dk_ensure_packages() {
  local what=$1; shift
  command -v dpkg-query >/dev/null || { dk_log "no dpkg here: make sure $* are installed"; return 0; }
  local missing; missing=$(dk_missing_packages "$@")
  [ -z "$missing" ] && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    dk_log "installing for $what: $(echo $missing)"
    if [ -z "${DK_APT_UPDATED:-}" ]; then apt-get update -qq >/dev/null || true; DK_APT_UPDATED=1; fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null \
      && return 0
    dk_log "apt-get install failed for: $(echo $missing)"
    return 1
  fi
  dk_log "missing for $what (run as root to install them, or: apt-get install $(echo $missing))"
  return 1
}

dk_find_nvcc() {
  if command -v nvcc >/dev/null; then command -v nvcc; return 0; fi
  [ -x /usr/local/cuda/bin/nvcc ] && { echo /usr/local/cuda/bin/nvcc; return 0; }
  return 1
}

dk_setup() {
  dk_ensure_packages "the build" cmake ninja-build g++ doctest-dev libdlpack-dev || {
    dk_log "cannot build without cmake, ninja, g++, doctest and dlpack headers"; return 1; }
  DK_PRESETS=(cpu)
  local nvcc
  if nvcc=$(dk_find_nvcc); then
    export PATH="$(dirname "$nvcc"):$PATH"
    DK_PRESETS+=(cuda)
    dk_log "CUDA: $($nvcc --version | tail -1)"
  else
    dk_log "CUDA: nvcc not found, the CUDA backend is not built (install the CUDA toolkit to build it)"
  fi
  if dk_ensure_packages "the HIP backend (gfx906)" hipcc libamdhip64-dev rocm-device-libs \
     && command -v clang++-15 >/dev/null; then
    DK_PRESETS+=(hip-gfx906)
    dk_log "HIP: $(clang++-15 --version | head -1)"
  else
    dk_log "HIP: Debian's ROCm toolchain is missing, the HIP backend is not built"
  fi
  dk_log "backends to build: ${DK_PRESETS[*]}"
}
