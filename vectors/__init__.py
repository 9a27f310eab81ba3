"""Dense passage vectors: a versioned stage beside the recognizers, and the vector ranking."""
