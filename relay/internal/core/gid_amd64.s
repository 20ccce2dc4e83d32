#include "textflag.h"

// func CurG() uintptr
TEXT ·CurG(SB), NOSPLIT, $0-8
	MOVQ (TLS), AX
	MOVQ AX, ret+0(FP)
	RET
