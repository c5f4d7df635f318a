#pragma once
// The one OpenGL header of the program: libepoxy resolves every GL entry point at run time.
#include <epoxy/gl.h>
