import com.zangjiuqi.core.BoardPhase;
import com.zangjiuqi.core.BoardPoint;
import com.zangjiuqi.core.BoardState;
import com.zangjiuqi.core.GameResult;
import com.zangjiuqi.core.Move;
import com.zangjiuqi.core.PieceColor;
import com.zangjiuqi.core.RuleMode;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Oracle driver for benchmarks/jqchess_crosscheck.py: JQ_Chess's own legal-move lists, one position at a time.
 *
 * <p>Protocol (UTF-8 lines on stdin; one long-lived process serves a whole run):
 * <pre>
 *   NEW                 start a game from the empty board, JQ's competitive (8x8) mode
 *   PLAY move           apply one whole-turn move, written as JQ writes it ("D4,D6,F6 TC-D5,E6 FC-A1"): the
 *                       clicked points of the path (a placement has one), the jumped stones (optional: the path
 *                       implies them) and the stones removed for squares
 *   QUIT                stop
 * </pre>
 * After NEW and after every PLAY it prints the position reached and JQ's full list of legal whole turns:
 * <pre>
 *   POS   board  phase  to_move  result
 *   MOVE  notation  board_after  phase_after  to_move_after  result_after     (one per legal move)
 *   END   count
 * </pre>
 * {@code board} is 64 digits, row-major with JQ's rank as the row and its file as the column (0 empty, 1 white,
 * 2 black); {@code result} is {@code ongoing} or {@code winner|reason} ({@code winner} white, black or draw).
 * The board after each move comes from playing the move on a copy of the state with {@code BoardState.applyMove},
 * so the Python side compares boards and never has to read JQ's notation.  A move that cannot be applied is
 * reported as {@code ERROR message} (for PLAY) or {@code BADMOVE notation message} (for a listed move).
 *
 * <p>The move list is JQ's {@code AiMoveGenerator.generateLegalMoves}; that class is package-private, so it is
 * reached by reflection rather than by putting this driver into JQ's package.
 *
 * <p>Speed: {@code BoardState.copyForSimulation} deep-copies the undo history and the repetition table, and the
 * generator copies the state once per candidate, so a long game would cost time quadratic in its length.  The
 * driver therefore keeps its state without undo history (nothing in JQ's rules reads it) and lists the moves
 * from a copy whose repetition table holds only the positions already seen twice: one move can only complete a
 * third occurrence of those, so each move's result is the same as with the whole table.  Both copies are made
 * with JQ's own {@code saveState} / {@code restoreState}.
 */
public final class Dump {
    private final Object generator;
    private final Method generate;
    private final PrintWriter out;
    private BoardState state;

    private Dump(PrintWriter out) throws ReflectiveOperationException {
        Class<?> cls = Class.forName("com.zangjiuqi.ai.AiMoveGenerator");
        Constructor<?> constructor = cls.getDeclaredConstructor();
        constructor.setAccessible(true);
        this.generator = constructor.newInstance();
        this.generate = cls.getDeclaredMethod("generateLegalMoves", BoardState.class);
        this.generate.setAccessible(true);
        this.out = out;
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintWriter out = new PrintWriter(new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8)));
        Dump dump = new Dump(out);
        String line;
        while ((line = in.readLine()) != null) {
            line = line.trim();
            if (line.isEmpty()) {
                continue;
            }
            if (line.equals("QUIT")) {
                break;
            }
            dump.handle(line);
            out.flush();
        }
        out.flush();
    }

    private void handle(String line) throws ReflectiveOperationException {
        if (line.equals("NEW")) {
            state = new BoardState(RuleMode.COMPETITIVE);
        } else if (line.startsWith("PLAY ")) {
            if (state == null) {
                out.println("ERROR PLAY before NEW");
                return;
            }
            try {
                state.applyMove(parseMove(line.substring(5).trim()));
                state = withoutHistory(state, false);
            } catch (RuntimeException ex) {
                out.println("ERROR cannot apply " + line.substring(5).trim() + ": " + ex);
                return;
            }
        } else {
            out.println("ERROR unknown command: " + line);
            return;
        }
        printPosition();
    }

    /** The position, then every legal move of JQ's generator with the board and result it leads to. */
    private void printPosition() throws ReflectiveOperationException {
        out.println(String.join("\t", "POS", board(state), state.phase().name(), toMove(state), result(state)));
        int count = 0;
        if (state.phase() != BoardPhase.FINISHED) {
            BoardState root = withoutHistory(state, true);
            for (Move move : legalMoves(root)) {
                String notation = notation(move);
                BoardState after = root.copyForSimulation();
                try {
                    after.applyMove(move);
                } catch (RuntimeException ex) {
                    out.println("BADMOVE\t" + notation + "\t" + ex);
                    continue;
                }
                out.println(String.join("\t", "MOVE", notation, board(after), after.phase().name(), toMove(after),
                        result(after)));
                count++;
            }
        }
        out.println("END\t" + count);
    }

    /**
     * A copy of {@code source} without the undo histories (placements, moves) and, if {@code repeatedOnly},
     * with only the repetition entries seen at least twice; everything else (cells with JQ's piece numbers,
     * turn, placement sequence, phase, result, the turn in progress) is kept.
     */
    private static BoardState withoutHistory(BoardState source, boolean repeatedOnly) {
        BoardState.SaveState saved = source.saveState();
        Map<String, Integer> counts = new HashMap<>();
        for (Map.Entry<String, Integer> entry : saved.repetitionCounts().entrySet()) {
            if (!repeatedOnly || entry.getValue() >= 2) {
                counts.put(entry.getKey(), entry.getValue());
            }
        }
        BoardState.SaveState light = new BoardState.SaveState(saved.mode(), saved.traditionalWinMode(),
                saved.cells(), saved.turn(), saved.sequence(), saved.phase(), saved.gameFinished(), saved.winner(),
                saved.resultReason(), List.of(), List.of(), saved.tempPath(), saved.tempCaptures(),
                saved.candidates(), saved.tempPiece(), saved.pendingCaptureCount(), saved.lastFormationMatch(),
                saved.clearedCenterA(), saved.clearedCenterB(), counts);
        BoardState copy = new BoardState(saved.mode());
        copy.restoreState(light);
        return copy;
    }

    @SuppressWarnings("unchecked")
    private List<Move> legalMoves(BoardState position) throws ReflectiveOperationException {
        try {
            return (List<Move>) generate.invoke(generator, position);
        } catch (InvocationTargetException ex) {
            if (ex.getCause() instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw ex;
        }
    }

    /** JQ's own move text ("path TC-jumped FC-removed"), the form PLAY reads back. */
    private static String notation(Move move) {
        StringBuilder text = new StringBuilder(points(move.path()));
        if (!move.jumpCaptures().isEmpty()) {
            text.append(" TC-").append(points(move.jumpCaptures()));
        }
        if (!move.squareCaptures().isEmpty()) {
            text.append(" FC-").append(points(move.squareCaptures()));
        }
        return text.toString();
    }

    private static String points(List<BoardPoint> points) {
        List<String> names = new ArrayList<>(points.size());
        for (BoardPoint point : points) {
            names.add(point.toNotation());
        }
        return String.join(",", names);
    }

    /** Inverse of {@link #notation}; the jumped stones (TC-) are implied by the path and not needed to replay. */
    private Move parseMove(String text) {
        int size = state.ruleConfig().boardSize();
        String[] parts = text.split("\\s+");
        List<BoardPoint> path = parsePoints(parts[0], size);
        List<BoardPoint> jumped = new ArrayList<>();
        List<BoardPoint> removed = new ArrayList<>();
        for (int i = 1; i < parts.length; i++) {
            if (parts[i].startsWith("TC-")) {
                jumped = parsePoints(parts[i].substring(3), size);
            } else if (parts[i].startsWith("FC-")) {
                removed = parsePoints(parts[i].substring(3), size);
            } else {
                throw new IllegalArgumentException("unknown move part: " + parts[i]);
            }
        }
        return new Move(path, jumped, removed);
    }

    private static List<BoardPoint> parsePoints(String text, int size) {
        List<BoardPoint> result = new ArrayList<>();
        for (String name : text.split(",")) {
            result.add(BoardPoint.parse(name, size));
        }
        return result;
    }

    private static String board(BoardState position) {
        int size = position.ruleConfig().boardSize();
        StringBuilder text = new StringBuilder(size * size);
        for (int rank = 0; rank < size; rank++) {
            for (int file = 0; file < size; file++) {
                int value = position.get(new BoardPoint(file, rank));
                text.append(value == 0 ? '0' : PieceColor.fromPieceValue(value) == PieceColor.WHITE ? '1' : '2');
            }
        }
        return text.toString();
    }

    private static String toMove(BoardState position) {
        return position.currentTurnColor() == PieceColor.WHITE ? "white" : "black";
    }

    private static String result(BoardState position) {
        GameResult result = position.gameResult();
        if (!result.finished()) {
            return "ongoing";
        }
        String winner = result.winner().map(color -> color == PieceColor.WHITE ? "white" : "black").orElse("draw");
        return winner + "|" + result.reason();
    }
}
