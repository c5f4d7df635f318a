# Every dependency, where it comes from, and why (the README repeats this for people).
include(GNUInstallDirs)  # bin/, share/ ... of `cmake --install` and the packages (cmake/Packaging.cmake)

# The engine's (every build):
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(CLI11 2.1 CONFIG REQUIRED)               # Debian libcli11-dev: command line
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)  # Debian libzstd-dev: what a remote engine sends, compressed
find_package(nlohmann_json 3.10 REQUIRED)             # Debian nlohmann-json3-dev: JSON output, settings
# Debian libopenblas-dev (pthread): the float64 reference every CPU check trusts (dgemm on the widened inputs).
pkg_check_modules(OPENBLAS REQUIRED IMPORTED_TARGET openblas)

# The window's (TILESCOPE_GUI=ON only: a build of the engine alone asks for none of these, and
# cmake/CheckNoWindow.cmake checks that no target links one):
if(TILESCOPE_GUI)
  find_package(glfw3 3.3 REQUIRED)                      # Debian libglfw3-dev: windows, input, GL context
  pkg_check_modules(EPOXY REQUIRED IMPORTED_TARGET epoxy) # Debian libepoxy-dev: OpenGL function loader
  find_package(OpenGL REQUIRED COMPONENTS OpenGL EGL)   # libgl-dev / libegl-dev (glvnd)
  find_package(Vulkan QUIET)                            # Debian libvulkan-dev: memory CUDA and GL share (heatmaps)
  # Debian libwebp-dev: the replay figure's animated WebP (WebPAnimEncoder, in libwebpmux); the tests decode it
  # with WebPAnimDecoder (libwebpdemux, the same package).
  pkg_check_modules(WEBP REQUIRED IMPORTED_TARGET libwebp libwebpmux)
  if(TILESCOPE_BUILD_TESTS)
    pkg_check_modules(WEBPDEMUX REQUIRED IMPORTED_TARGET libwebpdemux)
  endif()
  # Debian libstb-dev: the PNG writer (app/gfx) and reader (ui's tests); nothing of the engine uses it. Their
  # implementations at -O2 in every build, the sanitizer build's -O0 included (app/gfx/stb_impl.cpp).
  find_path(STB_INCLUDE_DIR stb_image_write.h PATH_SUFFIXES stb REQUIRED)
  add_library(tilescope_stb STATIC ${PROJECT_SOURCE_DIR}/app/gfx/stb_impl.cpp)
  target_include_directories(tilescope_stb SYSTEM PUBLIC ${STB_INCLUDE_DIR})
  target_compile_options(tilescope_stb PRIVATE -O2)

  include(${CMAKE_CURRENT_LIST_DIR}/ImGuiBundle.cmake)  # PyPI imgui-bundle sdist: Dear ImGui + ImPlot
endif()

# CUDA through CMake's CUDA language; cuBLAS from the same toolkit.
set(TILESCOPE_HAVE_CUDA OFF)
if(NOT TILESCOPE_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    find_package(CUDAToolkit REQUIRED)
    set(TILESCOPE_HAVE_CUDA ON)
    # Where an installed tilescope finds cuBLAS and NVRTC (its RUNPATH): the toolkit's lib folder of this build,
    # then where NVIDIA's packages and runfile install this toolkit version, then /usr/local/cuda's. Elsewhere
    # the loader's own paths (ld.so.conf, LD_LIBRARY_PATH) find them.
    string(REGEX MATCH "^[0-9]+[.][0-9]+" _cuda_mm "${CUDAToolkit_VERSION}")
    set(TILESCOPE_CUDA_RUNPATH "${CUDAToolkit_LIBRARY_DIR}"
        "/usr/local/cuda-${_cuda_mm}/targets/${CMAKE_SYSTEM_PROCESSOR}-linux/lib" "/usr/local/cuda/lib64")
    list(REMOVE_DUPLICATES TILESCOPE_CUDA_RUNPATH)
    message(STATUS "CUDA backend: ON (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES})")
  elseif(TILESCOPE_CUDA STREQUAL "ON")
    message(FATAL_ERROR "TILESCOPE_CUDA=ON but no CUDA compiler was found (install the CUDA toolkit or set CUDACXX)")
  else()
    message(WARNING "No CUDA compiler found: building the CPU backend only. Install the CUDA toolkit for the GPU.")
  endif()
endif()

if(TILESCOPE_BUILD_TESTS)
  find_package(GTest REQUIRED)                        # Debian libgtest-dev
  include(GoogleTest)
  find_package(Python3 REQUIRED COMPONENTS Interpreter) # Debian python3: generates the .npy test corpus
endif()
