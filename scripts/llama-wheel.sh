#!/usr/bin/env bash
# Build llama-cpp-python once, safely, into a wheel folder named after its version and build flags,
# and print that folder. Installs then take the wheel from there (pip --find-links with
# --only-binary llama-cpp-python), so they can never pick up a natively built wheel from pip's
# own cache, which is keyed by the source and not by CMAKE_ARGS.
#
# Why these flags: with GGML_NATIVE=ON, -march=native turns on AMX on Xeons that have it, and
# llama.cpp's AMX matrix multiply crashes (SIGSEGV) on any prompt batch of 2 or more tokens
# (ggml-org/llama.cpp#20824). An explicit AVX2 list runs on every x86-64 CPU since 2013-2015.
#
#   usage: scripts/llama-wheel.sh PYTHON      (prints the wheel folder on stdout)
set -euo pipefail

# The version tested with chatjudge; pyproject.toml pins the same one (a test checks they agree).
LLAMA_CPP_PYTHON_VERSION=0.3.36
CMAKE_FLAGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DLLAVA_BUILD=OFF"

python=${1:-python3}
case "$(uname -m)" in
  x86_64|amd64) flags=$CMAKE_FLAGS ;;
  *) flags="-DLLAVA_BUILD=OFF" ;;  # the AMX crash is x86-only; other CPUs build with their defaults
esac
key=$(printf '%s' "$flags" | sha256sum | cut -c1-12)
root=${CHATJUDGE_WHEELS:-${XDG_CACHE_HOME:-$HOME/.cache}/chatjudge/wheels}
dir=$root/llama-cpp-python-$LLAMA_CPP_PYTHON_VERSION-$key

# The wheel is tagged py3-none-<platform> (llama-cpp-python loads its library with ctypes),
# so one build serves every Python version on this machine.
if ! ls "$dir"/llama_cpp_python-"$LLAMA_CPP_PYTHON_VERSION"-*.whl >/dev/null 2>&1; then
  echo "building llama-cpp-python $LLAMA_CPP_PYTHON_VERSION from source (4-9 minutes on 2 cores)" >&2
  echo "  CMAKE_ARGS=$flags" >&2
  mkdir -p "$dir"
  tmp=$(mktemp -d "$dir/.build.XXXXXX")
  CMAKE_ARGS="$flags" FORCE_CMAKE=1 "$python" -m pip wheel --quiet --no-deps --no-cache-dir \
    --no-binary llama-cpp-python "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION" -w "$tmp" >&2
  printf '%s\n' "$flags" > "$dir/CMAKE_ARGS"
  mv "$tmp"/*.whl "$dir"/
  rmdir "$tmp"
fi
echo "$dir"
