"""How llama-cpp-python must be built to run safely on every x86-64 CPU, said in one place.

With native CPU detection (the default), a build on an Intel Xeon with AMX uses
llama.cpp's AMX matrix multiply, which crashes with SIGSEGV on any prompt batch of
two or more tokens (ggml-org/llama.cpp#20824); turning the AMX options off does not
help while `-march=native` is on. An explicit AVX2 instruction list runs on every
x86-64 CPU made since about 2015. `scripts/llama-wheel.sh` builds with these flags
(a test checks that it does), and the crash and AMX messages quote this command.
"""

LLAMA_CPP_PYTHON_VERSION = "0.3.36"  # the version tested; pyproject.toml pins the same
CMAKE_ARGS = (
    "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
)
# --no-cache-dir: pip caches a built wheel by its source, not by CMAKE_ARGS, so without it a
# machine that once built llama.cpp natively would reinstall that same crashing wheel.
SAFE_INSTALL = (
    f'CMAKE_ARGS="{CMAKE_ARGS}" pip install --force-reinstall --no-deps --no-cache-dir '
    f"--no-binary llama-cpp-python 'llama-cpp-python=={LLAMA_CPP_PYTHON_VERSION}'"
)
SAFE_INSTALL_DOC = "see 'The local judge' in docs/providers.md"
