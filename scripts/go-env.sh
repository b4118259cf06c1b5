# Sourced (not run) by the scripts that build Go programs: the module and build caches go to the
# machine's cache (scripts/cache-dir.sh), shared by every clone, so a warm machine compiles nothing.
# The build cache is keyed by Go itself (compiler version, flags, sources).
GOMODCACHE="$(scripts/cache-dir.sh)/go/mod"
GOCACHE="$(scripts/cache-dir.sh)/go/build"
GOPATH="$(scripts/cache-dir.sh)/go/path"
GOFLAGS="-modcacherw -buildvcs=false"
GOTOOLCHAIN=local
export GOMODCACHE GOCACHE GOPATH GOFLAGS GOTOOLCHAIN
