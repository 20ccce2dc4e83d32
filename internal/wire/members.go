package wire

// MembersOf reads, in one pass over a valid JSON object span, the
// top-level members named keys, comparing keys as Member does: vals[i] is
// the first value of keys[i] and counts[i] how many times it occurs (a
// caller that judges a value must refuse a count above 1). vals and counts
// must be at least as long as keys; what they held is overwritten.
func MembersOf(obj []byte, keys []string, vals [][]byte, counts []int) {
	for i := range keys {
		vals[i], counts[i] = nil, 0
	}
	it, ok := newMembers(obj)
	if !ok {
		return
	}
	for {
		k, esc, v, ok := it.next()
		if !ok {
			return
		}
		if esc {
			k = decodeEscaped(k)
		}
		for i, key := range keys {
			if string(k) == key {
				if counts[i] == 0 {
					vals[i] = v
				}
				counts[i]++
			}
		}
	}
}
