import TerminalText
import Testing

/// What follows an Esc, decoded without a terminal: the characters as `wget_wch` would hand them over.
@Suite struct EscapeSequenceTests {
    /// Feeds `inputs` one by one and returns every step, so a test sees where the sequence ended.
    private func steps(_ inputs: [EscapeSequence.Input]) -> [EscapeSequence.Step] {
        var sequence = EscapeSequence()
        return inputs.map { sequence.read($0) }
    }

    private func characters(_ text: String) -> [EscapeSequence.Input] {
        text.unicodeScalars.map { .character($0.value) }
    }

    @Test func anEscWithNothingAfterItIsTheEscKey() {
        #expect(EscapeSequence.parse("") == .escape)
        #expect(steps([.nothing]) == [.finished(.escape)])
    }

    @Test func sgrPressesAreClicksAndWheelTurnsAtAnyCell() {
        #expect(EscapeSequence.parse("[<0;1;1M") == .click(row: 0, column: 0))
        #expect(EscapeSequence.parse("[<0;230;5M") == .click(row: 4, column: 229))
        // Past what any one-byte encoding can carry.
        #expect(EscapeSequence.parse("[<0;1000;400M") == .click(row: 399, column: 999))
        #expect(EscapeSequence.parse("[<64;250;40M") == .wheelUp(row: 39, column: 249))
        #expect(EscapeSequence.parse("[<65;224;2M") == .wheelDown(row: 1, column: 223))
        // Shift, Alt and Ctrl held: still a click.
        #expect(EscapeSequence.parse("[<4;10;3M") == .click(row: 2, column: 9))
        #expect(EscapeSequence.parse("[<16;10;3M") == .click(row: 2, column: 9))
    }

    @Test func sgrReportsThatAreNotPressesOfButtonOneOrTheWheelAreDropped() {
        #expect(EscapeSequence.parse("[<0;230;5m") == nil, "a release")
        #expect(EscapeSequence.parse("[<2;230;5M") == nil, "the right button")
        #expect(EscapeSequence.parse("[<32;230;5M") == nil, "motion with the button held")
        #expect(EscapeSequence.parse("[<66;230;5M") == nil, "the wheel sideways")
    }

    @Test func malformedSgrReportsAreDropped() {
        #expect(EscapeSequence.parse("[<0;0;5M") == nil, "column 0 does not exist")
        #expect(EscapeSequence.parse("[<0;5;0M") == nil, "row 0 does not exist")
        #expect(EscapeSequence.parse("[<0;5M") == nil)
        #expect(EscapeSequence.parse("[<0;5;6;7M") == nil)
        #expect(EscapeSequence.parse("[<0;;6M") == nil)
        #expect(EscapeSequence.parse("[<0;1234567;6M") == nil, "more digits than a screen has columns")
        #expect(EscapeSequence.parse("[<0;5:1;6M") == nil)
        #expect(EscapeSequence.parse("[<0;5;6") == nil, "cut off")
    }

    @Test func x10ReportsAreDecodedWhenNcursesDoesNot() {
        // Button 1 at column 10, row 3 (1-based), each plus 32.
        #expect(EscapeSequence.parse("[M" + String(UnicodeScalar(32)) + "*#") == .click(row: 2, column: 9))
        #expect(EscapeSequence.parse("[M`!!") == .wheelUp(row: 0, column: 0))
        #expect(EscapeSequence.parse("[Ma!!") == .wheelDown(row: 0, column: 0))
        // Its three bytes are consumed even when they mean nothing, so none of them is taken for a key.
        #expect(steps(characters("[M#qq")) == [.needsMore, .needsMore, .needsMore, .needsMore, .finished(nil)])
        #expect(EscapeSequence.parse("[M ") == nil, "cut off")
    }

    @Test func plainEditingAndFunctionKeysAreKnown() {
        #expect(EscapeSequence.parse("[A") == .up)
        #expect(EscapeSequence.parse("[B") == .down)
        #expect(EscapeSequence.parse("[C") == .right)
        #expect(EscapeSequence.parse("[D") == .left)
        #expect(EscapeSequence.parse("[H") == .home)
        #expect(EscapeSequence.parse("[F") == .end)
        #expect(EscapeSequence.parse("[1;1A") == .up)
        #expect(EscapeSequence.parse("OA") == .up)
        #expect(EscapeSequence.parse("OF") == .end)
        #expect(EscapeSequence.parse("OP") == .function(1))
        #expect(EscapeSequence.parse("OS") == .function(4))
        #expect(EscapeSequence.parse("OM") == .enter)
        #expect(EscapeSequence.parse("[Z") == .backTab)
        #expect(EscapeSequence.parse("[1~") == .home)
        #expect(EscapeSequence.parse("[3~") == .delete)
        #expect(EscapeSequence.parse("[4~") == .end)
        #expect(EscapeSequence.parse("[5~") == .pageUp)
        #expect(EscapeSequence.parse("[6~") == .pageDown)
        #expect(EscapeSequence.parse("[11~") == .function(1))
        #expect(EscapeSequence.parse("[15~") == .function(5))
        #expect(EscapeSequence.parse("[17~") == .function(6))
        #expect(EscapeSequence.parse("[21~") == .function(10))
        #expect(EscapeSequence.parse("[24~") == .function(12))
    }

    @Test func unknownSequencesAreDroppedWhole() {
        for sequence in ["[1;5P", "[1;5A", "[3;2~", "[2~", "[22~", "[I", "[O", "[200~", "[201~", "[99;5u", "[?1;2c",
                         "[12d", "Ox", "Op", "O2P", "[>0;276;0c", "[ q", "[2Z", "[1;5Z"] {
            // Every character up to the final byte is taken by the sequence; the final byte finishes it with no key.
            let inputs = characters(sequence)
            let expected = Array(repeating: EscapeSequence.Step.needsMore, count: inputs.count - 1) + [.finished(nil)]
            #expect(steps(inputs) == expected, "ESC \(sequence)")
        }
    }

    @Test func altWithAKeyIsDropped() {
        #expect(steps(characters("x")) == [.finished(nil)])
        #expect(steps(characters("q")) == [.finished(nil)])
        #expect(steps(characters("é")) == [.finished(nil)])
        #expect(steps([.character(13)]) == [.finished(nil)], "Alt-Enter")
        #expect(steps([.character(127)]) == [.finished(nil)], "Alt-Backspace")
        #expect(steps([.keyCode]) == [.finished(nil)], "Alt with a key ncurses decoded, such as Alt-Up")
        // Alt-[ and Alt-O, nothing after them.
        #expect(EscapeSequence.parse("[") == nil)
        #expect(EscapeSequence.parse("O") == nil)
    }

    @Test func aSecondEscEndsTheFirstAsTheEscKey() {
        #expect(steps([.character(0x1B)]) == [.finishedBefore(.escape)])
        #expect(steps(characters("[1;") + [.character(0x1B)])
            == [.needsMore, .needsMore, .needsMore, .finishedBefore(nil)])
    }

    @Test func eventsAreNeverPartOfASequence() {
        #expect(steps([.event]) == [.finishedBefore(.escape)])
        #expect(steps(characters("[<0;5") + [.event])
            == [.needsMore, .needsMore, .needsMore, .needsMore, .needsMore, .finishedBefore(nil)])
        #expect(steps(characters("[") + [.keyCode]) == [.needsMore, .finishedBefore(nil)])
        #expect(steps(characters("[M!") + [.event]) == [.needsMore, .needsMore, .needsMore, .finishedBefore(nil)])
    }

    @Test func aCharacterThatCannotBelongToASequenceEndsItAndIsReadAgain() {
        #expect(steps(characters("[1") + [.character(13)]) == [.needsMore, .needsMore, .finishedBefore(nil)])
        #expect(steps(characters("[") + [.character(0x65E5)]) == [.needsMore, .finishedBefore(nil)])
        #expect(steps(characters("O") + [.character(127)]) == [.needsMore, .finishedBefore(nil)])
    }

    @Test func aSequenceCutOffByAPauseIsDropped() {
        #expect(steps(characters("[1;5") + [.nothing])
            == [.needsMore, .needsMore, .needsMore, .needsMore, .finished(nil)])
    }

    @Test func anOverlongSequenceIsReadToItsEndInBoundedMemoryAndDropped() {
        // Far more parameter bytes than are kept: every one is taken, none is a key, and the end drops it all.
        var sequence = EscapeSequence()
        #expect(sequence.read(.character(UInt32(UInt8(ascii: "[")))) == .needsMore)
        for _ in 0..<100_000 {
            guard sequence.read(.character(UInt32(UInt8(ascii: "1")))) == .needsMore else {
                Issue.record("a parameter byte ended the sequence")
                return
            }
        }
        #expect(sequence.read(.character(UInt32(UInt8(ascii: "~")))) == .finished(nil))
    }

    @Test func parsingIsWhatTheStepsSay() {
        var sequence = EscapeSequence()
        #expect(sequence.isAtStart)
        #expect(sequence.read(.character(UInt32(UInt8(ascii: "[")))) == .needsMore)
        #expect(!sequence.isAtStart)
        for character in "<0;230;5".unicodeScalars {
            #expect(sequence.read(.character(character.value)) == .needsMore)
        }
        #expect(sequence.read(.character(UInt32(UInt8(ascii: "M")))) == .finished(.click(row: 4, column: 229)))
    }
}
