#include "textflag.h"

// func Current() uintptr
TEXT ·Current(SB), NOSPLIT, $0-8
	MOVQ (TLS), AX
	MOVQ AX, ret+0(FP)
	RET
