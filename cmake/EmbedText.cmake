# embed_text(OUT NAMESPACE VAR1 FILE1 [VAR2 FILE2 ...]): a header in the build tree with each file's text as a
# `constexpr const char VAR[]` raw string, regenerated when a file changes (shaders travel inside the binary,
# so a headless server needs no asset path).
function(embed_text out ns)
  set(body "// Generated from the files named below by cmake/EmbedText.cmake. Do not edit.\n#pragma once\nnamespace ${ns} {\n")
  set(args ${ARGN})
  list(LENGTH args n)
  math(EXPR last "${n} - 1")
  foreach(i RANGE 0 ${last} 2)
    math(EXPR j "${i} + 1")
    list(GET args ${i} var)
    list(GET args ${j} file)
    file(READ "${file}" text)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${file}")
    string(APPEND body "// ${file}\ninline constexpr const char ${var}[] = R\"tsembed(${text})tsembed\";\n")
  endforeach()
  string(APPEND body "}  // namespace ${ns}\n")
  file(CONFIGURE OUTPUT "${out}" CONTENT "${body}" @ONLY)
endfunction()
