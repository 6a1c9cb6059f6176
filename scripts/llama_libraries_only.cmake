# Included at the end of llama.cpp's own project() call (CMAKE_PROJECT_llama.cpp_INCLUDE, set by
# scripts/setup.sh). llama-cpp-python forces llama.cpp's "common" library on, but its Python bindings load
# only libllama and libggml; common and its vendored HTTP and JSON code are about half of the compile
# (learning/setup.md). A normal variable shadows the forced cache entry inside llama.cpp's directory, and
# option() leaves it alone (policy CMP0077).
set(LLAMA_BUILD_COMMON OFF)
