# A build without the window (TILESCOPE_GUI=OFF) links nothing of it. A library that was not looked for is no
# target, and CMake would pass its bare name to the linker (-lglfw), so that a machine which happens to have it
# links it quietly: this check, run at the end of the configure, refuses every link of the window's libraries
# (by target or by name) and every target of the window's folders, naming the target that asks for it.

set(_window_libraries
    "^(glfw|glfw3|epoxy|GL|GLX|GLU|EGL|OpenGL|GLESv2|vulkan|X11|Xrandr|Xi|Xcursor|Xinerama|xcb|stb)$"
    "^-l(glfw|epoxy|GL|GLX|EGL|OpenGL|vulkan|X11|webp.*)$"
    "^(PkgConfig::EPOXY|PkgConfig::WEBP.*|OpenGL::.*|Vulkan::.*|glfw::.*)$"
    "^tilescope_(gfx|stb|imgui.*|ui.*|hosts.*)$"
    "(^|/)lib(glfw|epoxy|GL|GLX|EGL|OpenGL|vulkan|X11)[.]")

function(_tilescope_window_library name out)
  set(${out} FALSE PARENT_SCOPE)
  foreach(pattern IN LISTS _window_libraries)
    if(name MATCHES "${pattern}")
      set(${out} TRUE PARENT_SCOPE)
    endif()
  endforeach()
endfunction()

function(_tilescope_targets_below dir out)
  get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    _tilescope_targets_below("${sub}" more)
    list(APPEND targets ${more})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

_tilescope_targets_below("${PROJECT_SOURCE_DIR}" _all_targets)
set(_window_found "")
foreach(t IN LISTS _all_targets)
  _tilescope_window_library("${t}" is_window)
  if(is_window)
    list(APPEND _window_found "target ${t} exists")
  endif()
  set(items "")
  foreach(p LINK_LIBRARIES INTERFACE_LINK_LIBRARIES)
    get_target_property(v ${t} ${p})
    if(v)
      list(APPEND items ${v})
    endif()
  endforeach()
  foreach(item IN LISTS items)
    # $<LINK_ONLY:x> and other wrappers: the name inside.
    string(REGEX REPLACE "^[$]<[A-Z_]+:(.*)>$" "\\1" name "${item}")
    _tilescope_window_library("${name}" is_window)
    if(is_window)
      list(APPEND _window_found "${t} links ${name}")
    endif()
  endforeach()
endforeach()
foreach(found_target glfw PkgConfig::EPOXY OpenGL::GL OpenGL::EGL Vulkan::Vulkan)
  if(TARGET ${found_target})
    list(APPEND _window_found "${found_target} was looked for")
  endif()
endforeach()
if(_window_found)
  list(REMOVE_DUPLICATES _window_found)
  list(JOIN _window_found "; " _window_found)
  message(FATAL_ERROR "TILESCOPE_GUI=OFF, but the build reaches the window's libraries: ${_window_found}")
endif()
list(LENGTH _all_targets _n)
message(STATUS "Without the window: ${_n} targets, none links GLFW, GL, EGL, Vulkan, X11, epoxy, stb or ImGui")
