# cmake -DIN=file -DOUT=file.cc -DSYMBOL=name -P EmbedFile.cmake
# Writes a C++ source that defines `const unsigned char SYMBOL[]` with the bytes of IN and
# `const unsigned long SYMBOL##Size`.
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" hex_length)
math(EXPR size "${hex_length} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){32})" "\\1\n" bytes "${bytes}")
file(WRITE "${OUT}" "// Generated from ${IN} by cmake/EmbedFile.cmake; do not edit.\n"
  "extern const unsigned char ${SYMBOL}[];\nextern const unsigned long ${SYMBOL}Size;\n"
  "const unsigned char ${SYMBOL}[] = {\n${bytes}\n};\nconst unsigned long ${SYMBOL}Size = ${size};\n")
