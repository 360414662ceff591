# Turns IN (a text file) into OUT, a C header with `static const unsigned char NAME[]` and NAME_len:
# caustic serve's page compiled into the binary (cmake -DIN=... -DOUT=... -DNAME=... -P embed.cmake).
file(READ ${IN} hex HEX)
string(LENGTH "${hex}" n)
math(EXPR bytes "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
file(WRITE ${OUT} "/* generated from ${IN} by embed.cmake: do not edit */\n"
  "static const unsigned char ${NAME}[] = {\n${body}0};\nstatic const unsigned long ${NAME}_len = ${bytes};\n")
