export function commentCount(comments) {
  return comments.length;
}

export function renderComments(container, comments) {
  container.innerHTML = "";
  for (const comment of comments) {
    const item = document.createElement("li");
    item.innerHTML = `<strong>${comment.author}</strong>: ${comment.body}`;
    container.appendChild(item);
  }
}
