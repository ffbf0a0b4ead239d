/* gfortran_concat_string.c - the one routine of the GNU Fortran runtime that the LAPACK in
 * libopenblas.a needs for the functions kindling calls (Fortran string concatenation, as in
 * ILAENV's option strings), so the prebuilt addon links OpenBLAS statically without libgfortran:
 * Debian's libgfortran.a is not position-independent (its TLS cannot go into a shared object).
 * Compiled only into that build (tools/find-blas.js sources, KINDLING_BLAS_STATIC=1); hidden, like
 * every symbol of the addon. Same behaviour as libgfortran's (GCC >= 8, lengths are size_t): dest
 * gets s1 then s2, cut to destlen or padded with blanks. */
#include <stddef.h>
#include <string.h>

void _gfortran_concat_string(size_t destlen, char *dest, size_t len1, const char *s1, size_t len2, const char *s2) {
  if (len1 >= destlen) {
    memcpy(dest, s1, destlen);
    return;
  }
  memcpy(dest, s1, len1);
  dest += len1;
  destlen -= len1;
  if (len2 >= destlen) {
    memcpy(dest, s2, destlen);
    return;
  }
  memcpy(dest, s2, len2);
  memset(dest + len2, ' ', destlen - len2);
}
