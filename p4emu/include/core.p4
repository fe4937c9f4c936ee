/* p4emu's declaration of the P4_16 core library.
 * Names, signatures and member order match the p4lang core.p4 so that programs written
 * for p4c compile unchanged; the error member order fixes the BMv2 error codes. */

#ifndef _CORE_P4_
#define _CORE_P4_

error {
    NoError,
    PacketTooShort,
    NoMatch,
    StackOutOfBounds,
    HeaderTooShort,
    ParserTimeout,
    ParserInvalidArgument
}

extern packet_in {
    /* Fixed-size header. */
    void extract<T>(out T hdr);
    /* Header with one varbit field of the given size. */
    void extract<T>(out T variableSizeHeader, in bit<32> variableFieldSizeInBits);
    /* Peek without moving the cursor. */
    T lookahead<T>();
    void advance(in bit<32> sizeInBits);
    /* Length in bytes. */
    bit<32> length();
}

extern packet_out {
    void emit<T>(in T hdr);
}

extern void verify(in bool check, in error toSignal);

@noWarn("unused")
action NoAction() {}

match_kind {
    exact,
    ternary,
    lpm
}

extern bool static_assert(bool check, string message);
extern bool static_assert(bool check);

#endif /* _CORE_P4_ */
