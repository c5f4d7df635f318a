# What `cmake --install` puts where, and the Debian package CPack makes of it (scripts/package.sh makes both):
#   tilescope         the window and the engine (TILESCOPE_GUI=ON)
#   tilescope-engine  the engine alone, for GPU servers (TILESCOPE_GUI=OFF): no GLFW, GL, X11 or ImGui
# Both hold one program, bin/tilescope: its worker and compiler processes are itself (found through
# /proc/self/exe), and (the window's) colour maps, fonts and shaders are compiled into it, so it reads no data
# file at run time. Beside it, in share/doc/<package>/: the README, the example kernels, the copyright (Debian's
# machine-readable format: TileScope's MIT licence and that of everything compiled into the program, made of
# cmake/debian/copyright-* for what this build links) and changelog.Debian.gz (cmake/debian/changelog). The
# window's package also installs its desktop entry (share/applications/tilescope.desktop) and icon
# (share/icons/hicolor/scalable/apps/tilescope.svg). The two packages conflict (one /usr/bin/tilescope); the
# full one provides the engine's name, so what asks for tilescope-engine is content with either.
#
# Dependencies: dpkg-shlibdeps reads Debian's from the binary's libraries (CPACK_DEBIAN_PACKAGE_SHLIBDEPS):
# libc6, libstdc++6, libgcc-s1, libzstd1 (the remote engine's compression), libopenblas0 (the CPU checks'
# float64 reference), and for the window libglfw3,
# libepoxy0, libegl1, libvulkan1, libwebp7, libwebpmux3. The CUDA runtime is
# linked statically; the driver (libcuda.so.1) and NVML are opened at run time and not depended on, since the
# CPU backend runs without them. cuBLAS and NVRTC are the toolkit's shared libraries, and the toolkit is
# NVIDIA's, not Debian's (Debian's nvidia-cuda-toolkit is another version, whose libraries have other sonames):
# no Debian package has them, so dpkg-shlibdeps finds none (CPack runs it with --ignore-missing-info, which
# drops them without a word) and they are named here as NVIDIA's apt repository
# calls them, for the toolkit version of the build (libcublas-13-0, cuda-nvrtc-13-0). With
# TILESCOPE_DEB_CUDA_DEPENDS=OFF (a toolkit from NVIDIA's runfile, a module or a container) they become
# Recommends: apt installs the package anyway, and the binary finds the libraries through its RUNPATH
# (TILESCOPE_CUDA_RUNPATH: /usr/local/cuda-X.Y/targets/<arch>-linux/lib, /usr/local/cuda/lib64) or the loader's
# paths. The toolkit itself (the headers NVRTC may include for a person's kernel, compute-sanitizer) is a
# Suggests: tilescope finds it under CUDA_HOME or /usr/local/cuda.

set(TILESCOPE_DEB_MAINTAINER "TileScope developers <tilescope@invalid>" CACHE STRING
    "the Debian packages' Maintainer field")
option(TILESCOPE_DEB_CUDA_DEPENDS "The packages depend on NVIDIA's cuBLAS and NVRTC packages (OFF: recommend them)"
       ON)

if(TILESCOPE_GUI)
  set(TILESCOPE_PACKAGE_NAME tilescope)
  set(_other tilescope-engine)
else()
  set(TILESCOPE_PACKAGE_NAME tilescope-engine)
  set(_other tilescope)
endif()
set(_doc "${CMAKE_INSTALL_DATAROOTDIR}/doc/${TILESCOPE_PACKAGE_NAME}")
install(FILES README.md DESTINATION "${_doc}")
install(DIRECTORY examples/kernels/ DESTINATION "${_doc}/examples/kernels")
if(TILESCOPE_GUI)
  install(FILES assets/tilescope.desktop DESTINATION "${CMAKE_INSTALL_DATAROOTDIR}/applications")
  install(FILES assets/icons/tilescope.svg DESTINATION "${CMAKE_INSTALL_DATAROOTDIR}/icons/hicolor/scalable/apps")
endif()

# [SECTION] The copyright and the changelog of the package, written at configure time into debian/ of the build.
# The copyright: what every build compiles in (TileScope, CLI11, nlohmann-json), the CUDA runtime where CUDA is
# built, and the window's parts (Dear ImGui, ImPlot, the editor, the file dialogs, stb, the fonts, the colour maps).
set(_deb_in "${PROJECT_SOURCE_DIR}/cmake/debian")
set(_deb_out "${PROJECT_BINARY_DIR}/debian")
set(_parts copyright-engine)
if(TILESCOPE_HAVE_CUDA)
  list(APPEND _parts copyright-cuda)
endif()
if(TILESCOPE_GUI)
  list(APPEND _parts copyright-window)
endif()
set(_copyright "")
foreach(_part IN LISTS _parts)
  file(READ "${_deb_in}/${_part}" _text)
  string(APPEND _copyright "${_text}")
endforeach()
file(CONFIGURE OUTPUT "${_deb_out}/copyright" CONTENT "${_copyright}" @ONLY)
# The changelog's newest entry must be this version: a new version needs its entry in cmake/debian/changelog.
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
file(READ "${_deb_in}/changelog" _changelog)
set(_version "${PROJECT_VERSION}-${CPACK_DEBIAN_PACKAGE_RELEASE}")
if(NOT _changelog MATCHES "^@TILESCOPE_PACKAGE_NAME@ \\(([^)]*)\\)" OR NOT CMAKE_MATCH_1 STREQUAL _version)
  message(FATAL_ERROR "cmake/debian/changelog: its first entry is of version '${CMAKE_MATCH_1}', not ${_version}: "
                      "add an entry for ${_version}")
endif()
file(CONFIGURE OUTPUT "${_deb_out}/changelog.Debian" CONTENT "${_changelog}" @ONLY)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_deb_in}/copyright-engine ${_deb_in}/copyright-cuda
                                                               ${_deb_in}/copyright-window ${_deb_in}/changelog)
# Debian's policy: gzip -9, without the name and time of the file (-n), so the package is the same every time.
find_program(TILESCOPE_GZIP gzip)
if(TILESCOPE_GZIP)
  execute_process(COMMAND "${TILESCOPE_GZIP}" -9nc "${_deb_out}/changelog.Debian"
                  OUTPUT_FILE "${_deb_out}/changelog.Debian.gz" RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "gzip of ${_deb_out}/changelog.Debian failed: ${_rc}")
  endif()
  install(FILES "${_deb_out}/changelog.Debian.gz" DESTINATION "${_doc}")
else()
  message(WARNING "no gzip: the packages will have no changelog.Debian.gz")
endif()
install(FILES "${_deb_out}/copyright" DESTINATION "${_doc}")

set(CPACK_GENERATOR DEB)
set(CPACK_SOURCE_GENERATOR "")
set(CPACK_PACKAGE_NAME ${TILESCOPE_PACKAGE_NAME})
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${TILESCOPE_DEB_MAINTAINER}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # tilescope-engine_0.1.0-1_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_CONFLICTS ${_other})
set(CPACK_DEBIAN_PACKAGE_REPLACES ${_other})
if(TILESCOPE_GUI)
  set(CPACK_DEBIAN_PACKAGE_PROVIDES tilescope-engine)
  set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "zenity | kdialog")  # the desktop's file dialogs (the window has its own)
  set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "see how a CUDA matrix multiplication really runs")
  # Lines of at most 80 columns (Debian's policy for the extended description; CPack indents each by one).
  string(CONCAT CPACK_PACKAGE_DESCRIPTION
         "TileScope measures CUDA matrix-multiplication kernels against cuBLAS and shows\n"
         "A, B, C and the error as heatmaps, with timings, occupancy and the tile\n"
         "schedule, in a window or offscreen (tilescope snapshot, figure). The engine\n"
         "alone, for servers without a window, is tilescope-engine.")
else()
  set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "see how a CUDA matrix multiplication really runs (engine, no window)")
  string(CONCAT CPACK_PACKAGE_DESCRIPTION
         "TileScope's engine for GPU servers: tilescope list, run and bench measure CUDA\n"
         "matrix-multiplication kernels, verified against cuBLAS, from the command line,\n"
         "and tilescope serve is the engine of a window elsewhere\n"
         "(tilescope --engine 'ssh host tilescope serve'). Built without the window: it\n"
         "needs no GLFW, OpenGL, X11 or Dear ImGui. The window is in the package\n"
         "tilescope.")
endif()

set(_recommends "")
set(_suggests "")
if(TILESCOPE_HAVE_CUDA)
  string(REGEX MATCH "^([0-9]+)[.]([0-9]+)" _ "${CUDAToolkit_VERSION}")
  set(_v "${CMAKE_MATCH_1}-${CMAKE_MATCH_2}")
  set(_cuda "libcublas-${_v}, cuda-nvrtc-${_v}")
  if(TILESCOPE_DEB_CUDA_DEPENDS)
    set(CPACK_DEBIAN_PACKAGE_DEPENDS "${_cuda}")  # merged with dpkg-shlibdeps' list
  else()
    list(APPEND _recommends "${_cuda}")
  endif()
  set(_suggests "cuda-toolkit-${_v}")
endif()
if(CPACK_DEBIAN_PACKAGE_RECOMMENDS)
  list(APPEND _recommends "${CPACK_DEBIAN_PACKAGE_RECOMMENDS}")
endif()
list(JOIN _recommends ", " CPACK_DEBIAN_PACKAGE_RECOMMENDS)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "${_suggests}")

include(CPack)
