def commit_turn(history, user_text, assistant_text)
    return len(history)
