# Dear ImGui (docking branch, with the GLFW and OpenGL3 backends) and ImPlot, taken from PyPI's
# `imgui-bundle` source distribution at one pinned version, checked against its SHA-256, and unpacked
# into an ignored folder. Only the files we compile are extracted. Debian ships ImGui 1.86 and no
# ImPlot; imgui-bundle carries both at matching versions, which is why we take them from there.
# From the same archive: the fonts (Roboto, Source Code Pro), portable-file-dialogs (the desktop's own open
# and save dialogs, through zenity or kdialog),
# ImGuiColorTextEdit (the kernel source editor, with the header-only standalone Boost.Regex it highlights
# with), and the Dear ImGui Test Engine, which only the UI tests link (it is free for open-source and educational use; see
# its LICENSE.txt).
#
# People with their own copies pass -DTILESCOPE_IMGUI_DIR=/path/to/imgui (the folder holding imgui.h
# and backends/) and -DTILESCOPE_IMPLOT_DIR=/path/to/implot (the folder holding implot.h).

set(TILESCOPE_IMGUI_BUNDLE_VERSION "1.92.5" CACHE STRING "imgui-bundle sdist version on PyPI")
set(TILESCOPE_IMGUI_BUNDLE_SHA256
    "b11826b3805cff6064b8aca98def827ff36489128eac8d4f7859a3e155f6aefd" CACHE STRING "its SHA-256")
set(TILESCOPE_IMGUI_BUNDLE_URL
    "https://files.pythonhosted.org/packages/a8/f9/8290be29e2fa5c3d7b431bd8c8144726a20ac82908cfb7fa8605911c6793/imgui_bundle-1.92.5.tar.gz"
    CACHE STRING "where the sdist is downloaded from")
set(TILESCOPE_THIRD_PARTY_DIR "${PROJECT_SOURCE_DIR}/third_party" CACHE PATH
    "ignored folder for downloaded third-party sources")
set(TILESCOPE_IMGUI_DIR "" CACHE PATH "an existing Dear ImGui source folder (>= 1.90, docking branch)")
set(TILESCOPE_IMPLOT_DIR "" CACHE PATH "an existing ImPlot source folder")

function(tilescope_fetch_imgui_bundle out_imgui out_implot)
  set(root "${TILESCOPE_THIRD_PARTY_DIR}/imgui_bundle-${TILESCOPE_IMGUI_BUNDLE_VERSION}")
  set(stamp "${root}/.tilescope-extracted-4")  # bump when the list of extracted files changes
  if(NOT EXISTS "${stamp}")
    set(archive "${TILESCOPE_THIRD_PARTY_DIR}/imgui_bundle-${TILESCOPE_IMGUI_BUNDLE_VERSION}.tar.gz")
    if(EXISTS "${archive}")
      file(SHA256 "${archive}" have)
      if(NOT have STREQUAL TILESCOPE_IMGUI_BUNDLE_SHA256)
        file(REMOVE "${archive}")
      endif()
    endif()
    if(NOT EXISTS "${archive}")
      message(STATUS "Downloading imgui-bundle ${TILESCOPE_IMGUI_BUNDLE_VERSION} sdist from PyPI")
      file(DOWNLOAD "${TILESCOPE_IMGUI_BUNDLE_URL}" "${archive}.part"
           EXPECTED_HASH SHA256=${TILESCOPE_IMGUI_BUNDLE_SHA256} STATUS st TLS_VERIFY ON)
      list(GET st 0 code)
      if(NOT code EQUAL 0)
        file(REMOVE "${archive}.part")
        message(FATAL_ERROR "Could not download imgui-bundle (${st}). Download ${TILESCOPE_IMGUI_BUNDLE_URL} "
                            "into ${TILESCOPE_THIRD_PARTY_DIR}/, or pass -DTILESCOPE_IMGUI_DIR and "
                            "-DTILESCOPE_IMPLOT_DIR.")
      endif()
      file(RENAME "${archive}.part" "${archive}")
    endif()
    set(p "imgui_bundle-${TILESCOPE_IMGUI_BUNDLE_VERSION}/external")
    file(ARCHIVE_EXTRACT INPUT "${archive}" DESTINATION "${TILESCOPE_THIRD_PARTY_DIR}"
         PATTERNS "${p}/imgui/imgui/*.h" "${p}/imgui/imgui/*.cpp" "${p}/imgui/imgui/LICENSE.txt"
                  "${p}/imgui/imgui/backends/imgui_impl_glfw.*" "${p}/imgui/imgui/backends/imgui_impl_opengl3*"
                  "${p}/implot/implot/*.h" "${p}/implot/implot/*.cpp" "${p}/implot/implot/LICENSE"
                  "${p}/portable_file_dialogs/portable_file_dialogs/portable_file_dialogs.h"
                  "${p}/ImGuiColorTextEdit/ImGuiColorTextEdit/TextEditor.*"
                  "${p}/ImGuiColorTextEdit/ImGuiColorTextEdit/LanguageDefinitions.cpp"
                  "${p}/ImGuiColorTextEdit/ImGuiColorTextEdit/LICENSE"
                  "${p}/ImGuiColorTextEdit/ImGuiColorTextEdit/vendor/regex/include/*"
                  "${p}/imgui_test_engine/imgui_test_engine/imgui_test_engine/*"
                  "imgui_bundle-${TILESCOPE_IMGUI_BUNDLE_VERSION}/bindings/imgui_bundle/assets/fonts/Roboto/*"
                  "${p}/imgui_md/assets/fonts/SourceCodePro-Regular.ttf")
    file(TOUCH "${stamp}")
  endif()
  set(${out_imgui} "${root}/external/imgui/imgui" PARENT_SCOPE)
  set(${out_implot} "${root}/external/implot/implot" PARENT_SCOPE)
endfunction()
set(TILESCOPE_IMGUI_BUNDLE_ROOT "${TILESCOPE_THIRD_PARTY_DIR}/imgui_bundle-${TILESCOPE_IMGUI_BUNDLE_VERSION}")

# Always fetched (the fonts, the file dialogs and the test engine come from it); its ImGui and ImPlot are used
# unless the person named their own copies.
tilescope_fetch_imgui_bundle(_imgui _implot)
if(TRUE)
  if(TILESCOPE_IMGUI_DIR STREQUAL "")
    set(TILESCOPE_IMGUI_DIR "${_imgui}" CACHE PATH "" FORCE)
  endif()
  if(TILESCOPE_IMPLOT_DIR STREQUAL "")
    set(TILESCOPE_IMPLOT_DIR "${_implot}" CACHE PATH "" FORCE)
  endif()
endif()

foreach(f imgui.h imgui.cpp imgui_draw.cpp imgui_tables.cpp imgui_widgets.cpp backends/imgui_impl_glfw.cpp
          backends/imgui_impl_opengl3.cpp misc/cpp/imgui_stdlib.cpp)
  if(NOT EXISTS "${TILESCOPE_IMGUI_DIR}/${f}")
    message(FATAL_ERROR "TILESCOPE_IMGUI_DIR=${TILESCOPE_IMGUI_DIR} lacks ${f}")
  endif()
endforeach()
foreach(f implot.h implot.cpp implot_items.cpp)
  if(NOT EXISTS "${TILESCOPE_IMPLOT_DIR}/${f}")
    message(FATAL_ERROR "TILESCOPE_IMPLOT_DIR=${TILESCOPE_IMPLOT_DIR} lacks ${f}")
  endif()
endforeach()
file(STRINGS "${TILESCOPE_IMGUI_DIR}/imgui.h" _ver REGEX "#define IMGUI_VERSION_NUM")
string(REGEX MATCH "[0-9]+" _ver "${_ver}")
if(_ver LESS 19000)
  message(FATAL_ERROR "Dear ImGui in ${TILESCOPE_IMGUI_DIR} is ${_ver}; TileScope needs >= 1.90")
endif()
message(STATUS "Dear ImGui ${_ver} from ${TILESCOPE_IMGUI_DIR}; ImPlot from ${TILESCOPE_IMPLOT_DIR}")

# Dear ImGui + ImPlot. Of their files only imgui.cpp and imgui_widgets.cpp call the Test Engine's hooks (and
# ImGuiContext has the same layout either way), so everything else is compiled once, as objects that both
# copies of the library below share (implot_items.cpp alone is minutes of a build on two cores).
add_library(tilescope_imgui_shared OBJECT
  ${TILESCOPE_IMGUI_DIR}/imgui_draw.cpp ${TILESCOPE_IMGUI_DIR}/imgui_tables.cpp
  ${TILESCOPE_IMGUI_DIR}/backends/imgui_impl_glfw.cpp ${TILESCOPE_IMGUI_DIR}/backends/imgui_impl_opengl3.cpp
  ${TILESCOPE_IMPLOT_DIR}/implot.cpp ${TILESCOPE_IMPLOT_DIR}/implot_items.cpp)
# imgui-bundle's copy of ImGui carries its stack-layout extension, which imgui.cpp calls into; upstream copies
# passed through TILESCOPE_IMGUI_DIR do not have it.
if(EXISTS "${TILESCOPE_IMGUI_DIR}/imgui_stacklayout.cpp")
  target_sources(tilescope_imgui_shared PRIVATE "${TILESCOPE_IMGUI_DIR}/imgui_stacklayout.cpp")
endif()
# std::string text fields (the Your kernel panel's form), from ImGui's own misc folder.
target_sources(tilescope_imgui_shared PRIVATE "${TILESCOPE_IMGUI_DIR}/misc/cpp/imgui_stdlib.cpp")
# What compiling against ImGui needs (headers, defines, GL and GLFW), for the objects and both libraries; the
# objects themselves reach a link only through $<TARGET_OBJECTS>.
add_library(tilescope_imgui_headers INTERFACE)
target_include_directories(tilescope_imgui_headers SYSTEM INTERFACE ${TILESCOPE_IMGUI_DIR} ${TILESCOPE_IMGUI_DIR}/backends
                           ${TILESCOPE_IMGUI_DIR}/misc/cpp ${TILESCOPE_IMPLOT_DIR})
# GLFW must not pull in a GL header of its own: libepoxy provides GL.
target_compile_definitions(tilescope_imgui_headers INTERFACE IMGUI_DEFINE_MATH_OPERATORS GLFW_INCLUDE_NONE)
target_link_libraries(tilescope_imgui_headers INTERFACE PkgConfig::EPOXY glfw)
# One GL loader for the whole program: the OpenGL3 backend uses libepoxy, like our own GL code.
set_source_files_properties(${TILESCOPE_IMGUI_DIR}/backends/imgui_impl_opengl3.cpp PROPERTIES
  COMPILE_DEFINITIONS IMGUI_IMPL_OPENGL_LOADER_CUSTOM COMPILE_OPTIONS "-include;epoxy/gl.h")
# ImPlot's plotting functions are templates instantiated in implot_items.cpp for every numeric type it knows
# (ten); TileScope plots doubles (and may plot floats), so only those two are instantiated, ImPlot's own way:
# the file was a quarter of a build's compile time (a call with another type fails to link, it never
# misbehaves).
set_source_files_properties(${TILESCOPE_IMPLOT_DIR}/implot_items.cpp PROPERTIES
  COMPILE_DEFINITIONS "IMPLOT_CUSTOM_NUMERIC_TYPES=(float)(double)")
target_link_libraries(tilescope_imgui_shared PUBLIC tilescope_imgui_headers)
set_target_properties(tilescope_imgui_shared PROPERTIES POSITION_INDEPENDENT_CODE ON)

add_library(tilescope_imgui STATIC ${TILESCOPE_IMGUI_DIR}/imgui.cpp ${TILESCOPE_IMGUI_DIR}/imgui_widgets.cpp
                                   $<TARGET_OBJECTS:tilescope_imgui_shared>)
target_link_libraries(tilescope_imgui PUBLIC tilescope_imgui_headers)
set_target_properties(tilescope_imgui PROPERTIES POSITION_INDEPENDENT_CODE ON)

# [SECTION] Fonts, the file dialogs and the test engine (from the same pinned archive).
set(TILESCOPE_FONT_UI "${TILESCOPE_IMGUI_BUNDLE_ROOT}/bindings/imgui_bundle/assets/fonts/Roboto/Roboto-Regular.ttf")
set(TILESCOPE_FONT_MONO "${TILESCOPE_IMGUI_BUNDLE_ROOT}/external/imgui_md/assets/fonts/SourceCodePro-Regular.ttf")
# portable-file-dialogs (header only, WTFPL): runs zenity or kdialog as a child process.
set(TILESCOPE_PFD_DIR "${TILESCOPE_IMGUI_BUNDLE_ROOT}/external/portable_file_dialogs/portable_file_dialogs")
set(TILESCOPE_TEXT_EDITOR_DIR "${TILESCOPE_IMGUI_BUNDLE_ROOT}/external/ImGuiColorTextEdit/ImGuiColorTextEdit")
set(TILESCOPE_TEST_ENGINE_DIR "${TILESCOPE_IMGUI_BUNDLE_ROOT}/external/imgui_test_engine/imgui_test_engine/imgui_test_engine")
foreach(f "${TILESCOPE_FONT_UI}" "${TILESCOPE_FONT_MONO}" "${TILESCOPE_PFD_DIR}/portable_file_dialogs.h"
          "${TILESCOPE_TEXT_EDITOR_DIR}/TextEditor.cpp" "${TILESCOPE_TEXT_EDITOR_DIR}/vendor/regex/include/boost/regex.hpp"
          "${TILESCOPE_TEST_ENGINE_DIR}/imgui_te_engine.cpp")
  if(NOT EXISTS "${f}")
    message(FATAL_ERROR "${f} is missing: the imgui-bundle sources in ${TILESCOPE_THIRD_PARTY_DIR} are incomplete "
                        "(delete that folder to fetch them again)")
  endif()
endforeach()

# Dear ImGui once more, with the Test Engine's hooks compiled in (imgui.cpp and imgui_widgets.cpp; the rest is
# the shared objects above): only the UI tests link this copy, so the application itself carries no test code.
add_library(tilescope_imgui_te STATIC
  ${TILESCOPE_IMGUI_DIR}/imgui.cpp ${TILESCOPE_IMGUI_DIR}/imgui_widgets.cpp $<TARGET_OBJECTS:tilescope_imgui_shared>
  ${TILESCOPE_TEST_ENGINE_DIR}/imgui_te_context.cpp ${TILESCOPE_TEST_ENGINE_DIR}/imgui_te_coroutine.cpp
  ${TILESCOPE_TEST_ENGINE_DIR}/imgui_te_engine.cpp ${TILESCOPE_TEST_ENGINE_DIR}/imgui_te_exporters.cpp
  ${TILESCOPE_TEST_ENGINE_DIR}/imgui_te_perftool.cpp ${TILESCOPE_TEST_ENGINE_DIR}/imgui_te_ui.cpp
  ${TILESCOPE_TEST_ENGINE_DIR}/imgui_te_utils.cpp ${TILESCOPE_TEST_ENGINE_DIR}/imgui_capture_tool.cpp)
target_include_directories(tilescope_imgui_te SYSTEM PUBLIC ${TILESCOPE_TEST_ENGINE_DIR} ${TILESCOPE_TEST_ENGINE_DIR}/..)
target_compile_definitions(tilescope_imgui_te PUBLIC
                           IMGUI_ENABLE_TEST_ENGINE IMGUI_TEST_ENGINE_ENABLE_COROUTINE_STDTHREAD_IMPL=1
                           IMGUI_TEST_ENGINE_ENABLE_IMPLOT=0 IMGUI_TEST_ENGINE_ENABLE_CAPTURE=0
                           IMGUI_TEST_ENGINE_ENABLE_STD_FUNCTION=1)
target_link_libraries(tilescope_imgui_te PUBLIC tilescope_imgui_headers Threads::Threads)
set_target_properties(tilescope_imgui_te PROPERTIES POSITION_INDEPENDENT_CODE ON EXCLUDE_FROM_ALL ON)
