# embed_binary(OUT NAMESPACE VAR1 FILE1 [VAR2 FILE2 ...]): a C++ source in the build tree defining, for each
# file, `extern const unsigned char VAR[]` and `extern const unsigned int VAR_size` (fonts travel inside the
# binary, so the window looks the same wherever it is started). Regenerated when a file changes.
function(embed_binary out ns)
  set(body "// Generated from the files named below by cmake/EmbedBinary.cmake. Do not edit.\nnamespace ${ns} {\n")
  set(args ${ARGN})
  list(LENGTH args n)
  math(EXPR last "${n} - 1")
  foreach(i RANGE 0 ${last} 2)
    math(EXPR j "${i} + 1")
    list(GET args ${i} var)
    list(GET args ${j} file)
    file(READ "${file}" hex HEX)
    file(SIZE "${file}" size)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${file}")
    string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
    string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)"
                         "\\1\n" bytes "${bytes}")
    string(APPEND body "// ${file}\nextern const unsigned char ${var}[] = {\n${bytes}};\n"
                       "extern const unsigned int ${var}_size = ${size};\n")
  endforeach()
  string(APPEND body "}  // namespace ${ns}\n")
  file(CONFIGURE OUTPUT "${out}" CONTENT "${body}" @ONLY)
endfunction()
